import sys
import forge
print("to stdout")
print("to stderr", file=sys.stderr)
forge.result("printed")
