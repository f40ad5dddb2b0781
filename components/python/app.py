"""The CPython engine of forge-host: a componentize-py app implementing the `forge:engine` world.

componentize-py runs this module's top level at build time and snapshots the interpreter, so:
- only modules imported here (directly or by `preload`) can be imported by scripts at run time;
- nothing here may depend on the run (that happens in `Engine.run`), and files read here
  (`requirements.txt`, `forge/profiles.json`) are read at build time: the snapshot keeps what
  was read, not the files.
"""

import os
import sys

import process_clock  # first: modules imported after it see its process clocks
import preload  # noqa: F401  (the curated standard library scripts may import)
import tz_database  # noqa: F401  (the IANA time zone database, served from memory)
import forge
from forge import _runtime

try:
    # A profile's build puts its `forge_profile` on the path (components/python-science/app):
    # it imports the profile's packages and names the engine.
    import forge_profile
except ModuleNotFoundError:
    forge_profile = None
else:
    _runtime.ENGINE_ID = forge_profile.ENGINE_ID

import wit_world
from wit_world.exports import engine


def _pinned_componentize_py():
    """The componentize-py version `requirements.txt` pins (the one place the pin is written;
    xtask and the science build read it too): the tool that is building this component."""
    path = os.path.join(os.path.dirname(__file__), "requirements.txt")
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("componentize-py=="):
                return line.split("==", 1)[1].split()[0]
    raise RuntimeError(f"{path} pins no componentize-py")


COMPONENTIZE_PY_VERSION = _pinned_componentize_py()


class Engine(wit_world.exports.Engine):
    def describe(self) -> engine.EngineInfo:
        extras = f" + {forge_profile.VERSION}" if forge_profile else ""
        return engine.EngineInfo(
            id=_runtime.ENGINE_ID,
            language="python",
            version=f"CPython {sys.version.split()[0]}{extras} (componentize-py {COMPONENTIZE_PY_VERSION})",
            extensions=[".py"],
            capabilities=["tool-calls", "concurrent-calls", "catalog", "state", "text", "progress", "files"],
        )

    def run(self, request: engine.RunRequest):
        return _runtime.run(request)


assert forge.__name__ == "forge"

# Everything above is in the snapshot every run starts from. Moving it to the collector's
# permanent generation keeps a run's collections from walking (and so writing to, and so
# copying) every page of it: less memory per run, and shorter collections.
import gc  # noqa: E402

gc.collect()
gc.freeze()
