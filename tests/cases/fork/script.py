import os, forge
try:
    os.fork()
    forge.result('forked')
except (AttributeError, OSError):
    forge.result('refused')
