import os, forge
seen = []
for path in ["/etc/passwd", "/root", "/proc/self/environ", "../../../etc/passwd", "/work/../../etc/passwd"]:
    try:
        open(path).read()
        seen.append(path)
    except OSError:
        pass
forge.result({"seen": seen, "env": sorted(k for k in os.environ if k not in ("PWD",))})
