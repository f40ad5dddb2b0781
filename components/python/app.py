"""The CPython engine of forge-host: a componentize-py app implementing the `forge:engine` world.

componentize-py runs this module's top level at build time and snapshots the interpreter, so:
- only modules imported here (directly or by `preload`) can be imported by scripts at run time;
- nothing here may do I/O or depend on the run (that happens in `Engine.run`).
"""

import sys

import preload  # noqa: F401  (the curated standard library scripts may import)
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


class Engine(wit_world.exports.Engine):
    def describe(self) -> engine.EngineInfo:
        extras = f" + {forge_profile.VERSION}" if forge_profile else ""
        return engine.EngineInfo(
            id=_runtime.ENGINE_ID,
            language="python",
            version=f"CPython {sys.version.split()[0]}{extras} (componentize-py 0.25.1)",
            extensions=[".py"],
            capabilities=["tool-calls", "concurrent-calls", "catalog", "state", "text", "progress", "files"],
        )

    def run(self, request: engine.RunRequest):
        return _runtime.run(request)


assert forge.__name__ == "forge"
