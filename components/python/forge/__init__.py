"""forge: what a script running in forge-host can ask its host for.

    import forge
    rows = forge.read_table("sales.csv")             # a list of dicts
    forge.progress("summing", 1, 2)
    answer = forge.call("echo", {"n": len(rows)})   # a tool call (raises forge.ToolError)
    a, b = forge.gather([("sleep", {"ms": 10}), ("echo", {})])   # calls run concurrently
    forge.state.set("last_total", 42)               # shared by runs of one session
    forge.text("a note for the caller")
    forge.result({"rows": len(rows)})               # the run's JSON result

Files: inputs are read-only in /input (`inputs()`, `input_path(name)`), what the script writes
to /output (`output_path(name)`) is published when the run succeeds, /work is scratch and the
current directory. `forge.charts` writes standalone SVG charts and an HTML report.
"""

import json
import os

from componentize_py_types import Err, Ok
from wit_world.imports import catalog as _catalog
from wit_world.imports import output as _output
from wit_world.imports import state as _state
from wit_world.imports import tools as _tools

from . import _runtime

__all__ = [
    "ToolError", "result", "text", "progress", "call", "gather", "tools", "state", "inputs",
    "input_path", "output_path", "input_dir", "output_dir", "work_dir", "read_table", "charts",
]

INPUT_DIR = "/input"
OUTPUT_DIR = "/output"
WORK_DIR = "/work"


class ToolError(Exception):
    """A tool call failed. `code` is a stable error code (TOOL_FAILED, TOOL_DENIED,
    TOOL_NOT_FOUND, BUDGET_EXCEEDED, INVALID_INPUT), `message` says why."""

    def __init__(self, code, message):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def _limits():
    return _runtime.current.limits if _runtime.current else None


def _check_size(what, text, budget_name):
    limits = _limits()
    budget = getattr(limits, budget_name, None) if limits else None
    size = len(text.encode())
    if budget is not None and size > budget:
        raise ToolError("BUDGET_EXCEEDED", f"{what} is {size} bytes, over the budget of {budget} bytes")


def _raise(error):
    info = error.value
    raise ToolError(info.code, info.message) from None


def result(value):
    """Sets the run's result (any JSON-serialisable value; the last call wins)."""
    _runtime.encode(value, "the result")
    _runtime.current.result = value


def text(value):
    """Output meant for the caller (the `text` list of the run's report)."""
    encoded = _runtime.encode(value, "a text() value")
    _check_size("a text() value", encoded, "max_output_bytes")
    try:
        _output.text(encoded)
    except Err as error:
        _raise(error)


def progress(message, completed=None, total=None):
    """Reports progress: a message, and optionally how many of how many units are done."""
    as_number = lambda v: None if v is None else float(v)  # noqa: E731
    _output.progress(str(message), as_number(completed), as_number(total))


def _encode_input(name, input):
    encoded = _runtime.encode({} if input is None else input, f"the input of `{name}`")
    _check_size(f"the input of `{name}`", encoded, "max_call_input_bytes")
    return encoded


def call(name, input=None):
    """Calls tool `name` with a JSON-serialisable input and returns its JSON response."""
    encoded = _encode_input(name, input)
    try:
        return json.loads(_tools.call(str(name), encoded))
    except Err as error:
        _raise(error)


def gather(calls, return_exceptions=False):
    """Runs `[(name, input), ...]` concurrently and returns their responses in order. A failed
    call raises its ToolError (after every call finished), or, with `return_exceptions=True`,
    takes the ToolError's place in the list."""
    slots = []
    waiting = {}
    for index, (name, input) in enumerate(calls):
        try:
            call_id = _tools.begin_call(str(name), _encode_input(name, input))
            waiting[call_id] = index
            slots.append(None)
        except Err as error:
            slots.append(ToolError(error.value.code, error.value.message))
        except ToolError as error:
            slots.append(error)
    while waiting:
        done = _tools.wait_any()
        if done is None:
            break
        index = waiting.pop(done.id, None)
        if index is None:
            continue
        if isinstance(done.outcome, Ok):
            slots[index] = json.loads(done.outcome.value)
        else:
            slots[index] = ToolError(done.outcome.value.code, done.outcome.value.message)
    if not return_exceptions:
        for slot in slots:
            if isinstance(slot, ToolError):
                raise slot
    return slots


def _tool_info(info):
    return {
        "name": info.name,
        "description": info.description,
        "effect": info.effect.name.lower(),
        "input_schema": json.loads(info.input_schema),
        "function_path": list(info.function_path),
    }


def _tool_function(name, description):
    def tool(*args, **kwargs):
        if args and (len(args) > 1 or kwargs or not isinstance(args[0], dict)):
            raise TypeError(f"{name}: pass keyword arguments, or one dict")
        return call(name, args[0] if args else kwargs)

    tool.__name__ = name.rsplit(".", 1)[-1]
    tool.__qualname__ = name
    tool.__doc__ = description
    return tool


class _Namespace:
    """The tools of one namespace (an MCP server, the workspace), as functions."""

    def __init__(self, name, functions):
        self._name = name
        self._functions = functions

    def __getattr__(self, attr):
        try:
            return self._functions[attr]
        except KeyError:
            raise AttributeError(f"the catalog has no tool `{self._name}.{attr}`") from None

    def __dir__(self):
        return sorted(self._functions)

    def __repr__(self):
        return f"<tools {self._name}: {', '.join(sorted(self._functions))}>"


class _Tools:
    """The catalog and its tools as functions.

    `forge.tools()` lists every tool this run may call and `forge.tools("query")` searches them;
    `forge.tools.fs.read_text_file(path="a.txt")` calls the tool `fs.read_text_file` (keyword
    arguments, or one dict, are its input). A tool's function path comes from the host:
    characters that cannot be in an identifier become `_`, a leading digit gets a `_` before it,
    a keyword a `_` after it, and so does a namespace named `call`, `list`, `search` or
    `describe`.
    """

    def __call__(self, query=None, limit=50):
        found = _catalog.list_tools() if query is None else _catalog.search_tools(str(query), int(limit))
        return [_tool_info(info) for info in found]

    def _bindings(self):
        run = _runtime.current
        bound = getattr(run, "tool_bindings", None)
        if bound is None:
            bound = {}
            for info in _catalog.list_tools():
                path = list(info.function_path)
                function = _tool_function(info.name, info.description)
                if len(path) == 1:
                    bound[path[0]] = function
                elif len(path) == 2:
                    namespace = bound.setdefault(path[0], {})
                    if isinstance(namespace, dict):
                        namespace[path[1]] = function
            bound = {k: _Namespace(k, v) if isinstance(v, dict) else v for k, v in bound.items()}
            run.tool_bindings = bound
        return bound

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        try:
            return self._bindings()[attr]
        except KeyError:
            raise AttributeError(f"the catalog has no tool or namespace `{attr}`") from None

    def __dir__(self):
        return sorted(self._bindings())


tools = _Tools()


class _State:
    """Small JSON values shared by the runs of one session; changes are kept only when the run
    succeeds."""

    def get(self, key, default=None):
        try:
            text = _state.get(str(key))
        except Err as error:
            _raise(error)
        return default if text is None else json.loads(text)

    def set(self, key, value):
        encoded = _runtime.encode(value, f"the value of `{key}`")
        _check_size(f"the value of `{key}`", encoded, "max_state_value_bytes")
        try:
            _state.set(str(key), encoded)
        except Err as error:
            _raise(error)

    def delete(self, key):
        try:
            _state.delete(str(key))
        except Err as error:
            _raise(error)

    def keys(self):
        return list(_state.keys())


state = _State()


def inputs():
    """The input files: name (below /input), size, sha256 and path."""
    files = _runtime.current.inputs if _runtime.current else []
    return [
        {"name": f.name, "size": f.size, "sha256": f.sha256, "path": f"{INPUT_DIR}/{f.name}"}
        for f in files
    ]


def _relative(name, what):
    name = str(name).replace("\\", "/")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts or name.startswith("/") or ".." in parts:
        raise ValueError(f"{what} must be a relative path inside its folder, not `{name}`")
    return "/".join(parts)


def input_path(name):
    """The path of input `name` (as listed by `inputs()`, or a file below an input folder)."""
    path = f"{INPUT_DIR}/{_relative(name, 'an input name')}"
    if not os.path.exists(path):
        known = ", ".join(f["name"] for f in inputs()) or "none"
        raise FileNotFoundError(f"no input `{name}` (inputs: {known})")
    return path


def output_path(name):
    """A path in /output for a file to publish; its folders are created."""
    path = f"{OUTPUT_DIR}/{_relative(name, 'an output name')}"
    folder = os.path.dirname(path)
    # WASI has no `/` to walk up to: create only what is below /output.
    if folder != OUTPUT_DIR:
        os.makedirs(folder, exist_ok=True)
    return path


def input_dir():
    return INPUT_DIR


def output_dir():
    return OUTPUT_DIR


def work_dir():
    return WORK_DIR


def _cell(value):
    if value is None:
        return None
    text = value.strip()
    if text == "":
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return value


def read_table(name, table=None, infer=True, as_=None, **pandas_options):
    """Reads a tabular input as a list of dicts: CSV/TSV (numbers converted unless
    `infer=False`), JSON lines, a JSON array of objects, or a table of a SQLite file (`table`
    names it; the only table is used when there is one). `as_="pandas"` returns a pandas
    DataFrame instead (python-science engine; CSV/TSV and JSON lines through pandas' readers,
    to which other keyword arguments go, e.g. `parse_dates=["date"]`)."""
    if pandas_options and as_ is None:
        raise TypeError(f"unexpected arguments {sorted(pandas_options)} (pandas options need as_='pandas')")
    path = input_path(name) if not str(name).startswith("/") else str(name)
    lower = path.lower()
    if as_ not in (None, "pandas", "dataframe", "df"):
        raise ValueError(f"as_ must be None or 'pandas', not {as_!r}")
    frame = as_ is not None
    if frame and not lower.endswith((".sqlite", ".sqlite3", ".db", ".json")):
        # Text tables go straight to pandas' own reader (typed columns, fast on large files).
        import pandas

        if lower.endswith((".jsonl", ".ndjson")):
            return pandas.read_json(path, lines=True, **pandas_options)
        with open(path, newline="", encoding="utf-8-sig") as f:
            sample = f.read(4096)
        tab = lower.endswith(".tsv") or ("\t" in sample and "," not in sample)
        return pandas.read_csv(path, sep="\t" if tab else ",", encoding="utf-8-sig",
                               **({} if infer else {"dtype": str, "keep_default_na": False}),
                               **pandas_options)
    if lower.endswith((".sqlite", ".sqlite3", ".db")):
        rows = _read_sqlite(path, table)
    elif lower.endswith((".jsonl", ".ndjson")):
        with open(path, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.strip()]
    elif lower.endswith(".json"):
        with open(path, encoding="utf-8") as f:
            rows = json.load(f)
        if not isinstance(rows, list):
            raise ValueError(f"{name}: a JSON table must be an array of objects")
    else:
        import csv

        with open(path, newline="", encoding="utf-8-sig") as f:
            sample = f.read(4096)
            f.seek(0)
            delimiter = "\t" if lower.endswith(".tsv") or ("\t" in sample and "," not in sample) else ","
            reader = csv.DictReader(f, delimiter=delimiter)
            rows = [
                {k: (_cell(v) if infer else v) for k, v in row.items()} for row in reader
            ]
    if frame:
        import pandas

        return pandas.DataFrame(rows)
    return rows


def _read_sqlite(path, table):
    import sqlite3

    # immutable=1: the file is read-only and nothing else writes it, so sqlite needs no locks.
    connection = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        connection.row_factory = sqlite3.Row
        if table is None:
            names = [r[0] for r in connection.execute(
                "SELECT name FROM sqlite_master WHERE type IN ('table','view') AND name NOT LIKE 'sqlite_%'"
            )]
            if len(names) != 1:
                raise ValueError(f"{path} has tables {names}: pass table=NAME")
            table = names[0]
        quoted = '"' + str(table).replace('"', '""') + '"'
        return [dict(row) for row in connection.execute(f"SELECT * FROM {quoted}")]
    finally:
        connection.close()


from . import charts  # noqa: E402  (charts uses output_path)
