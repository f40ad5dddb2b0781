"""Applies the unified diffs of patches/ (the text before a diff's first `--- ` line says why the
patch exists). Each hunk must match exactly (no fuzz): a hunk whose lines are gone fails the
build, since the pinned source changed. `patch -p1 --fuzz=0` applies the same files."""

import re
from pathlib import Path

PATCHES = Path(__file__).resolve().parent / "patches"
HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def patch_files(prefix):
    """The patches named `prefix-*.patch`, in name order."""
    return sorted(PATCHES.glob(f"{prefix}-*.patch"))


def parse(path):
    """{file (below the patch's a/ and b/): [(first old line, old lines, new lines), ...]}."""
    files, hunks = {}, None
    lines = Path(path).read_text().splitlines(keepends=True)
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            rel = lines[i + 1][4:].rstrip("\n").split("\t")[0].split("/", 1)[1]
            hunks = files.setdefault(rel, [])
            i += 2
            continue
        m = HUNK.match(line)
        if not m or hunks is None:
            i += 1  # the description before the first diff
            continue
        old_n = int(m.group(2) or 1)
        new_n = int(m.group(4) or 1)
        old, new = [], []
        i += 1
        while (len(old) < old_n or len(new) < new_n) and i < len(lines):
            tag, text = lines[i][:1], lines[i][1:]
            if lines[i] == "\n":  # an empty context line whose space was stripped
                tag, text = " ", "\n"
            if tag in " -":
                old.append(text)
            if tag in " +":
                new.append(text)
            if tag not in " -+":
                raise SystemExit(f"{path}: malformed hunk line {lines[i]!r}")
            i += 1
        hunks.append((int(m.group(1)), old, new))
    return files


def apply_hunks(name, text, hunks):
    """The text with each hunk applied, at its line number or the nearest place it matches."""
    lines = text.splitlines(keepends=True)
    offset = 0
    for start, old, new in hunks:
        base = start - 1 if old else start  # `-N,0`: the lines go after line N
        places = [k for k in range(len(lines) - len(old) + 1) if lines[k:k + len(old)] == old]
        if not places:
            raise SystemExit(f"patch no longer applies: {name}: hunk at line {start}:\n"
                             + "".join(old))
        at = min(places, key=lambda k: abs(k - (base + offset)))
        lines[at:at + len(old)] = new
        offset = at - base + len(new) - len(old)
    return "".join(lines)


def apply_patches(root, patches, pristine=None):
    """Applies the patch files to the files under root, each starting from `pristine(rel)` when
    given (so an earlier version of a patch is undone) or else from the file as it is. A file
    whose patched text is unchanged is not rewritten and keeps its mtime (ninja recompiles only
    what a patch changed)."""
    edits = {}
    for patch in patches:
        for rel, hunks in parse(patch).items():
            edits.setdefault(rel, []).append((patch.name, hunks))
    for rel, by_patch in edits.items():
        path = root / rel
        current = path.read_text()
        text = pristine(rel) if pristine else current
        for name, hunks in by_patch:
            text = apply_hunks(f"{name}: {rel}", text, hunks)
        if text != current:
            path.write_text(text)
