"""The step runner: a stamp file per step, keyed by the step's recipe, and the helpers every step
uses (logging, running commands, hashing files)."""

import hashlib
import inspect
import os
import subprocess
import time
from pathlib import Path


def log(msg):
    print(f"[science {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def run(cmd, **kw):
    log("$ " + " ".join(str(c) for c in cmd))
    subprocess.run([str(c) for c in cmd], check=True, **kw)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify(path, expected):
    got = sha256(path)
    if got != expected:
        raise SystemExit(f"sha256 mismatch for {path}: got {got}, pinned {expected}")


def mtime(path):
    """Newest mtime under path (0 when missing)."""
    p = Path(path)
    if not p.exists():
        return 0.0
    newest = p.stat().st_mtime
    if p.is_dir():
        for root, dirs, files in os.walk(p):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for name in files:
                try:
                    newest = max(newest, os.lstat(os.path.join(root, name)).st_mtime)
                except FileNotFoundError:
                    pass
    return newest


def source_text(path):
    """The text of a file the build installs or applies (a wrapper, a patch), as a recipe part:
    editing it reruns the step that uses it."""
    return (Path(path).name, Path(path).read_text())


class Step:
    """A stamp file per step. The stamp holds a hash of the step's recipe (the source of the
    functions, the constants and the files it uses): the step is fresh when the recipe is
    unchanged and the stamp is newer than all its inputs. Editing one step reruns that step and
    what follows it, not the whole build."""

    def __init__(self, work, name, inputs, recipe=()):
        self.stamp = work / "stamps" / name
        self.inputs = list(inputs)
        self.name = name
        h = hashlib.sha256()
        for part in recipe:
            text = inspect.getsource(part) if callable(part) else repr(part)
            h.update(text.encode() + b"\0")
        self.key = h.hexdigest()

    def fresh(self):
        if not self.stamp.exists() or self.stamp.read_text().strip() != self.key:
            return False
        built = self.stamp.stat().st_mtime
        return all(mtime(i) <= built for i in self.inputs)

    def done(self):
        self.stamp.parent.mkdir(parents=True, exist_ok=True)
        self.stamp.write_text(self.key + "\n")


def fresh_or_log(step):
    if step.fresh():
        log(f"{step.name}: up to date")
        return True
    log(f"{step.name}: building")
    return False
