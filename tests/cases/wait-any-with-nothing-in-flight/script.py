# The raw import the forge module is built on: with nothing begun, wait-any returns None at once.
import forge
from wit_world.imports import tools
forge.result(tools.wait_any() is None)
