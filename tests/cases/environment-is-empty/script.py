import os, forge
forge.result(sorted(os.environ))
