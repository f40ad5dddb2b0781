#!@PYTHON@
"""The linker meson and the compression step use (through clang's -fuse-ld): wasm-ld with the
ELF-only flags clang and meson pass dropped, and a check of every link's output.

- Drops --start-group/--end-group and the other flags wasm-ld does not know, and clang's
  `--entry _initialize` (the outputs are shared libraries).
- A meson probe (output `output.exe`) keeps `main` and is linked without the bundled shared
  libraries: wasm-ld makes a signature mismatch against a shared library an error, and probes
  declare `char f(void)`. Its undefined symbols are checked against the exports instead.
- Fails a link whose output imports a function no bundled library exports, so that meson's
  has_function probes answer truthfully and an extension cannot import what is not there.

Installed as WORK/bin/wasm-ld by the sysroot step, which fills in the @-delimited names.
"""

import os
import subprocess
import sys

WASM_LD = "@WASM_LD@"
EXPORTS = "@EXPORTS@"  # the symbols the bundled libraries export, one a line
PROBE_LIBS = "@PROBE_LIBS@".split()  # the bundled libraries a probe is not linked against

DROPPED = ("--start-group", "--end-group", "--eh-frame-hdr", "--as-needed", "--no-as-needed",
           "--allow-shlib-undefined", "--no-undefined")


def wasm_ld_args(argv):
    """(the arguments for wasm-ld, the output file or None)."""
    args, out = [], None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in DROPPED or a.startswith("--hash-style="):
            i += 1
            continue
        if a == "--entry" and i + 1 < len(argv) and argv[i + 1] == "_initialize":
            i += 2
            continue
        if a == "-o" and i + 1 < len(argv):
            out = argv[i + 1]
        args.append(a)
        i += 1
    return args, out


def imports(path):
    """(module, name, kind) of each import of a wasm module, and ("<export>", name, kind) of
    each export."""
    d = open(path, "rb").read()

    def leb(i):
        r = s = 0
        while True:
            b = d[i]
            i += 1
            r |= (b & 0x7f) << s
            s += 7
            if b < 0x80:
                return r, i

    def name(i):
        n, i = leb(i)
        return d[i:i + n].decode(), i + n

    i = 8
    while i < len(d):
        sid = d[i]
        size, i = leb(i + 1)
        end = i + size
        if sid == 2:  # imports
            count, i = leb(i)
            for _ in range(count):
                mod, i = name(i)
                field, i = name(i)
                kind = d[i]
                i += 1
                if kind == 0:  # function: type index
                    _, i = leb(i)
                elif kind == 1:  # table: reference type, limits
                    i += 1
                    flags = d[i]
                    i += 1
                    _, i = leb(i)
                    if flags & 1:
                        _, i = leb(i)
                elif kind == 2:  # memory: limits
                    flags = d[i]
                    i += 1
                    _, i = leb(i)
                    if flags & 1:
                        _, i = leb(i)
                else:  # global: value type, mutability (a tag: attribute, type index < 128)
                    i += 2
                yield mod, field, kind
        elif sid == 7:  # exports
            count, i = leb(i)
            for _ in range(count):
                field, i = name(i)
                kind = d[i]
                _, i = leb(i + 1)
                yield "<export>", field, kind
        i = end


def main():
    args, out = wasm_ld_args(sys.argv[1:])
    if out is not None and out.endswith("output.exe"):
        # a meson probe: keep main (hidden by default, so garbage-collected with what it calls)
        args = [a for a in args if a not in PROBE_LIBS]
        args += ["--export-if-defined=main", "--unresolved-symbols=import-dynamic"]
    r = subprocess.run([WASM_LD] + args)
    if r.returncode != 0 or out is None:
        sys.exit(r.returncode)
    exports = set(open(EXPORTS).read().split())
    table = list(imports(out))
    own = set(f for m, f, k in table if m == "<export>")  # GOT entries for the module's own symbols
    undef = [f for m, f, k in table if ((m == "env" and k == 0) or m in ("GOT.func", "GOT.mem"))
             and f not in own]
    missing = [s for s in undef if s not in exports and not s.startswith("PyInit_")]
    if missing:
        os.unlink(out)
        sys.stderr.write("wasm-ld wrapper: undefined symbols not exported by the bundled libraries: "
                         + " ".join(missing[:20]) + "\n")
        sys.exit(1)


if __name__ == "__main__":
    main()
