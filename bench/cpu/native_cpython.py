"""Native CPython 3.14 for `cargo xtask bench`: the same minor version as the CPython component,
for the CPU-bound comparison (issue 12). This machine's Debian has 3.11, so Debian sid's build is
fetched with apt-get (a private apt directory, so the machine's own apt state is untouched; apt
checks every package against the archive's signed index) and unpacked, with sid's own C library,
into DIR. Nothing is installed on the system: DIR/python3.14 runs the interpreter through sid's
dynamic loader. Idempotent: a DIR whose interpreter runs is kept.

Usage: native_cpython.py DIR     (prints the path of DIR/python3.14)
"""

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "components/python-science"))
from science_build.apt import apt_mirrors  # noqa: E402  (the one place that reads the machine's apt sources)

SUITE = "sid"
# The interpreter, its standard library, and the shared libraries it needs that are newer in sid
# than on this machine (the C library above all).
PACKAGES = ["python3.14-minimal", "libpython3.14-minimal", "libpython3.14-stdlib", "libc6",
            "libexpat1", "zlib1g", "libmpdec4", "libffi8"]


def works(wrapper):
    try:
        out = subprocess.run([str(wrapper), "-c", "import json, re, sys; print(sys.version)"],
                             capture_output=True, text=True, timeout=60)
    except OSError:
        return False
    return out.returncode == 0 and out.stdout.startswith("3.14")


def fetch(dest):
    apt = dest / "apt"
    for d in ["etc/sources.list.d", "etc/preferences.d", "state/lists/partial", "cache/archives/partial"]:
        (apt / d).mkdir(parents=True, exist_ok=True)
    (apt / "etc/sources.list").write_text("")
    (apt / "state/status").touch()
    uri, signed_by = apt_mirrors()[0]
    stanza = f"Types: deb\nURIs: {uri}\nSuites: {SUITE}\nComponents: main\n"
    if signed_by:
        stanza += f"Signed-By: {signed_by}\n"
    (apt / "etc/sources.list.d/sid.sources").write_text(stanza)
    opts = []
    for key, value in [("Dir::Etc::sourcelist", apt / "etc/sources.list"),
                       ("Dir::Etc::sourceparts", apt / "etc/sources.list.d"),
                       ("Dir::Etc::preferencesparts", apt / "etc/preferences.d"),
                       ("Dir::State", apt / "state"), ("Dir::State::status", apt / "state/status"),
                       ("Dir::Cache", apt / "cache"), ("Debug::NoLocking", "1"),
                       ("APT::Sandbox::User", "root")]:
        opts += ["-o", f"{key}={value}"]
    subprocess.run(["apt-get", "-q", *opts, "update"], check=True, stdout=subprocess.DEVNULL)
    debs = dest / "debs"
    debs.mkdir(exist_ok=True)
    subprocess.run(["apt-get", "-q", *opts, "download", *[f"{p}:amd64" for p in PACKAGES]],
                   check=True, cwd=debs, stdout=subprocess.DEVNULL)
    root = dest / "root"
    for deb in sorted(debs.glob("*.deb")):
        subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)


def main():
    dest = Path(sys.argv[1]).resolve()
    wrapper = dest / "python3.14"
    if not works(wrapper):
        dest.mkdir(parents=True, exist_ok=True)
        fetch(dest)
        libs = dest / "root/usr/lib/x86_64-linux-gnu"
        wrapper.write_text(
            "#!/bin/sh\n"
            f'exec "{libs}/ld-linux-x86-64.so.2" --library-path "{libs}" "{dest}/root/usr/bin/python3.14" "$@"\n'
        )
        wrapper.chmod(0o755)
        if not works(wrapper):
            raise SystemExit(f"native CPython 3.14 does not run from {dest}")
    print(wrapper)


if __name__ == "__main__":
    main()
