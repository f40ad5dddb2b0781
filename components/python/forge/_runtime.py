"""How one script runs inside the engine: per-run state, the static import scan, execution,
error classification and the result. Scripts use the public `forge` module, not this one."""

import ast
import builtins
import json
import linecache
import math
import os
import random
import sys
import traceback

from componentize_py_types import Err
from wit_world.exports import engine

import process_clock


def _read_profiles():
    with open(os.path.join(os.path.dirname(__file__), "profiles.json"), encoding="utf-8") as f:
        return json.load(f)


# The packages each Python profile adds to the standard library: {engine id: {"packages":
# [top-level names], "build": the command that builds it}}. `profiles.json` is the one list:
# python-cpython's is the time zone database every profile carries (`tz_database`), the science
# build's `forge_profile` imports its own, and xtask publishes them in engines.lock (what picks a
# profile for a script). Read at import, which componentize-py runs at build time: the snapshot
# holds the value, and the file is not needed at run time.
PROFILES = _read_profiles()

_UNSET = object()

# The engine id these messages name; an app built on this runtime for another profile sets it.
ENGINE_ID = "python-cpython"


class Run:
    """What the `forge` module needs to know about the current run."""

    def __init__(self, request):
        self.filename = request.filename
        self.limits = request.limits
        self.inputs = list(request.inputs)
        # The codes the host's calls fail with: an uncaught `forge.ToolError` carrying one keeps
        # it, any other code is SCRIPT_RUNTIME (the host sends them with every request).
        self.pass_through_codes = frozenset(request.pass_through_codes)
        self.result = _UNSET


current = None


def failure(code, message, stack=None):
    return Err(engine.ScriptError(code=code, message=message, stack=stack))


# Frames shown at most: the innermost ones (a runaway recursion has millions).
MAX_TRACEBACK_FRAMES = 60


def _format_exception(error, filename):
    """The traceback from the script's own first frame on (the engine's frames are noise),
    keeping the innermost frames of a very deep one."""
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    tb = tb or error.__traceback__
    depth, walk = 0, tb
    while walk is not None and depth <= MAX_TRACEBACK_FRAMES:
        depth, walk = depth + 1, walk.tb_next
    limit = -MAX_TRACEBACK_FRAMES if depth > MAX_TRACEBACK_FRAMES else None
    text = "".join(traceback.format_exception(type(error), error, tb, limit=limit))
    if limit is not None:
        text = f"(only the innermost {MAX_TRACEBACK_FRAMES} frames are shown)\n" + text
    return text


def _guarded(handlers):
    """Whether `except` handlers catch a failed import."""
    for handler in handlers:
        if handler.type is None:
            return True
        names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        for name in names:
            if isinstance(name, ast.Name) and name.id in (
                "ImportError", "ModuleNotFoundError", "Exception", "BaseException"
            ):
                return True
    return False


def imported_modules(tree):
    """(module, line) for every import that runs unconditionally: not under a `try` whose
    handlers catch ImportError, and not inside a function body (imports there are lazy)."""
    found = []

    def visit(nodes, guarded):
        for node in nodes:
            if isinstance(node, ast.Import) and not guarded:
                found.extend((alias.name, node.lineno) for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and not guarded and node.level == 0 and node.module:
                found.append((node.module, node.lineno))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
                visit(node.body, guarded or _guarded(node.handlers))
                for handler in node.handlers:
                    visit(handler.body, guarded)
                visit(node.orelse, guarded)
                visit(node.finalbody, guarded)
            else:
                for field in ("body", "orelse", "finalbody"):
                    visit(getattr(node, field, None) or [], guarded)
                for case in getattr(node, "cases", None) or []:
                    visit(case.body, guarded)

    visit(tree.body, False)
    return found


def _available(module):
    try:
        import importlib.util

        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _read_stdlib_wasi():
    """What of the standard library this build lacks, and why (forge/stdlib_wasi.json, read at
    build time: the one list, which the build's `stdlib` step also reads)."""
    path = os.path.join(os.path.dirname(__file__), "stdlib_wasi.json")
    with open(path, encoding="utf-8") as f:
        return json.load(f)


STDLIB_WASI = _read_stdlib_wasi()


def why_unavailable(module):
    top = module.split(".")[0]
    if top in STDLIB_WASI["left_out"]:
        return (
            f"the standard library module `{top}` is left out of this engine: "
            f"{STDLIB_WASI['left_out'][top]}"
        )
    if top in STDLIB_WASI["absent"]:
        return (
            f"the standard library module `{top}` is not part of CPython's build for WASI "
            f"(WebAssembly): {STDLIB_WASI['absent'][top]}"
        )
    if top in sys.stdlib_module_names:
        return f"the standard library module `{module}` cannot be found in this engine"
    provider = next((name for name, p in PROFILES.items()
                     if name != ENGINE_ID and top in p["packages"]), None)
    if provider is not None and ENGINE_ID == "python-cpython":
        own = " and ".join(["the standard library"] + PROFILES[ENGINE_ID]["packages"])
        return (
            f"package `{top}` is not available in this engine ({ENGINE_ID}: {own} only); it "
            f"comes with the {provider} profile: {PROFILES[provider]['build']}"
        )
    return (
        f"package `{top}` is not available in this engine ({ENGINE_ID}); if it is pure Python, "
        f"add it with `forge-host packages add {top}` (the name to add may differ from the "
        f"module's)"
    )


def _plain_import(line):
    """The module of a line that is one plain `import M [as N]` or `from M import ...`, else
    None (anything else that mentions `import` needs the full scan)."""
    if ";" in line or "\\" in line:
        return None
    words = line.split("#", 1)[0].split()
    if len(words) >= 2 and words[0] == "import" and (len(words) == 2 or (len(words) == 4 and words[2] == "as")):
        return words[1]
    if len(words) >= 4 and words[0] == "from" and words[2] == "import":
        return words[1]
    return None


def needs_scan(source):
    """Whether the import scan must parse the script: not when every line that mentions
    `import` is a plain import of a module this interpreter already holds, which cannot fail.
    Parsing a script into Python's AST objects costs more than compiling it."""
    for line in source.splitlines():
        if "import" in line and _plain_import(line) not in sys.modules:
            return True
    return False


def scan(tree):
    """Fails before the script starts when an unconditional import cannot succeed."""
    for module, line in imported_modules(tree):
        if not _available(module):
            raise failure("PACKAGE_UNAVAILABLE", f"line {line}: {why_unavailable(module)}")


def classify(error, filename):
    try:
        stack = _format_exception(error, filename)
    except BaseException:  # noqa: BLE001 - out of memory again, most likely
        stack = f"{type(error).__name__}: {error}"
    from forge import ToolError

    if isinstance(error, ToolError):
        passed = current.pass_through_codes if current else frozenset()
        code = error.code if isinstance(error.code, str) and error.code in passed else "SCRIPT_RUNTIME"
        return failure(code, stack, stack)
    if isinstance(error, ModuleNotFoundError):
        name = error.name or str(error)
        return failure("PACKAGE_UNAVAILABLE", f"{why_unavailable(name)}\n{stack}", stack)
    if isinstance(error, MemoryError):
        return failure("MEMORY_LIMIT", stack, stack)
    if isinstance(error, RecursionError):
        return failure("STACK_LIMIT", stack, stack)
    return failure("SCRIPT_RUNTIME", stack, stack)


def to_json_value(value):
    """A JSON-ready copy of `value`: tuples and sets become lists, NaN and infinities null,
    dates ISO strings; numpy and pandas values through their own converters."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): to_json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_json_value(v) for v in value]
    for method, args in (("to_dict", ("records",)), ("tolist", ()), ("item", ()), ("isoformat", ())):
        convert = getattr(value, method, None)
        if callable(convert):
            try:
                return to_json_value(convert(*args))
            except (TypeError, ValueError):
                continue
    import decimal
    import fractions
    import pathlib

    if isinstance(value, (decimal.Decimal, fractions.Fraction)):
        return to_json_value(float(value))
    if isinstance(value, pathlib.PurePath):
        return str(value)
    raise TypeError(f"a {type(value).__name__} is not JSON-serialisable")


def encode(value, what):
    try:
        text = json.dumps(to_json_value(value), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{what} is not JSON-serialisable: {error}") from None
    except RecursionError:
        raise ValueError(f"{what} nests too deep to be sent as JSON") from None
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as error:
            # A lone surrogate ("\ud800") is a str but not Unicode text: the script's error.
            bad = error.object[error.start : error.end].encode("unicode_escape").decode("ascii")
            raise ValueError(f"{what} holds {bad}, a lone surrogate that is not Unicode text") from None
    return text


def _flush():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


def run(request):
    """Runs one request; every failure leaves as a `ScriptError` (anything else escaping here
    would trap the instance)."""
    try:
        return _run(request)
    except Err:
        raise
    except BaseException as error:  # noqa: BLE001
        raise failure("ISOLATE_FAILURE", f"the Python engine failed: {type(error).__name__}: {error}") from None


# The host mounts the locked packages a script imports read-only under /packages, and lists
# their wheels (which CPython imports as zips) in this file, dependencies first. They go after
# the engine's own path, so a locked copy never shadows what the profile builds in.
PACKAGES_LIST = "/packages/sys-path.txt"


def mount_packages():
    try:
        with open(PACKAGES_LIST, encoding="utf-8") as f:
            wheels = [line.strip() for line in f if line.strip()]
    except OSError:
        return
    for wheel in wheels:
        if wheel not in sys.path:
            sys.path.append(wheel)


def look_again_at_missing_paths():
    """A sys.path folder that was not there when the snapshot was taken (python-science's
    library folder, mounted with the standard library at run time) is cached as having no
    finder, and would stay unsearched: forget that, so that this run looks again."""
    for path in sys.path:
        if path in sys.path_importer_cache and sys.path_importer_cache[path] is None:
            del sys.path_importer_cache[path]


def _run(request):
    global current
    current = Run(request)
    process_clock.restart()
    # The build-time snapshot froze the generators' state: every run starts from fresh entropy.
    random.seed()
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()
    try:
        os.chdir("/work")
    except OSError:
        pass
    mount_packages()
    look_again_at_missing_paths()
    sys.argv = [request.filename]
    # Print as it happens (the host keeps a bounded tail and streams it live), not at exit.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(line_buffering=True)
        except (AttributeError, ValueError, OSError):
            pass
    source = request.source
    filename = request.filename
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    scanned = needs_scan(source)
    try:
        if scanned:
            tree = ast.parse(source, filename)
            code = compile(tree, filename, "exec", dont_inherit=True)
        else:
            code = compile(source, filename, "exec", dont_inherit=True)
    except SyntaxError as error:
        text = "".join(traceback.format_exception_only(type(error), error))
        raise failure("SCRIPT_SYNTAX", text.strip(), text) from None
    except (ValueError, MemoryError, RecursionError) as error:
        raise failure("SCRIPT_SYNTAX", f"{type(error).__name__}: {error}") from None
    if scanned:
        scan(tree)
    namespace = {"__name__": "__main__", "__file__": filename, "__builtins__": builtins}
    try:
        exec(code, namespace)
    except SystemExit as error:
        if error.code not in (None, 0):
            _flush()
            raise failure("SCRIPT_RUNTIME", f"the script exited with status {error.code!r}") from None
    except BaseException as error:  # noqa: BLE001 - every script failure is reported
        # Free what the script holds before describing the failure: after a MemoryError the
        # description itself needs memory.
        namespace.clear()
        import gc

        gc.collect()
        _flush()
        raise classify(error, filename) from None
    _flush()
    if current.result is _UNSET:
        return None
    try:
        text = encode(current.result, "the result")
    except TypeError as error:
        raise failure("SCRIPT_RUNTIME", str(error)) from None
    size = len(text.encode())
    if size > request.limits.max_result_bytes:
        raise failure(
            "BUDGET_EXCEEDED",
            f"the result is {size} bytes, over the budget of {request.limits.max_result_bytes} bytes",
        )
    return text
