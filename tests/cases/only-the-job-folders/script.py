import os, forge
seen = {name: os.path.isdir("/" + name) for name in ("input", "output", "work", "etc", "tmp", "home")}
try:
    os.listdir("/")
    seen["root"] = "listed"
except OSError:
    seen["root"] = "refused"
forge.result(seen)
