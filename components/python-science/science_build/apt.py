"""A private apt directory on the machine's own Debian mirror, for a suite other than the
machine's (sid for the `deb` step, trixie's sources for `compression-src`). No mirror host name
is written here: it is read from /etc/apt at build time, and the system apt config is never
touched."""

import re
from pathlib import Path


def apt_mirrors():
    """The Debian archive URIs the machine's own apt sources name (deb822 and one-line files)."""
    uris = []
    for f in sorted(Path("/etc/apt/sources.list.d").glob("*.sources")):
        for stanza in re.split(r"\n\s*\n", f.read_text()):
            fields = {}
            for line in stanza.splitlines():
                if line.startswith("#") or ":" not in line:
                    continue
                k, v = line.split(":", 1)
                fields[k.strip().lower()] = v.strip()
            if "deb" not in fields.get("types", "").split() or fields.get("enabled", "yes") == "no":
                continue
            suites = fields.get("suites", "").split()
            if any(s.endswith("-security") for s in suites):
                continue
            for uri in fields.get("uris", "").split():
                uris.append((uri, fields.get("signed-by")))
    lists = [Path("/etc/apt/sources.list")] + sorted(Path("/etc/apt/sources.list.d").glob("*.list"))
    for f in lists:
        if not f.exists():
            continue
        for line in f.read_text().splitlines():
            m = re.match(r"\s*deb\s+(\[[^\]]*\]\s+)?(\S+)\s+(\S+)", line)
            if m and not m.group(3).endswith("-security"):
                uris.append((m.group(2), None))
    if not uris:
        raise SystemExit("no Debian archive found in /etc/apt/sources.list.d/*.sources or sources.list")
    return uris


def mirror_stanza(types, suite):
    """A deb822 source for `suite` (main) on the machine's own Debian mirror (apt_mirrors)."""
    uri, signed_by = apt_mirrors()[0]
    stanza = f"Types: {types}\nURIs: {uri}\nSuites: {suite}\nComponents: main\n"
    if signed_by:
        stanza += f"Signed-By: {signed_by}\n"
    return stanza


def private_apt(apt, stanza):
    """apt-get options for a private apt directory `apt` whose one source is `stanza`: its own
    sources, lists, state and cache; the system apt config is never touched."""
    for d in ["etc/sources.list.d", "etc/preferences.d", "etc/apt.conf.d", "state/lists/partial",
              "cache/archives/partial"]:
        (apt / d).mkdir(parents=True, exist_ok=True)
    (apt / "etc/sources.list").write_text("")
    (apt / "etc/sources.list.d/science.sources").write_text(stanza)
    opts = []
    for k, v in [("Dir::Etc::sourcelist", apt / "etc/sources.list"),
                 ("Dir::Etc::sourceparts", apt / "etc/sources.list.d"),
                 ("Dir::Etc::preferencesparts", apt / "etc/preferences.d"),
                 ("Dir::Etc::preferences", apt / "etc/preferences"),
                 ("Dir::State", apt / "state"), ("Dir::State::status", apt / "state/status"),
                 ("Dir::Cache", apt / "cache"), ("Debug::NoLocking", "1"),
                 ("APT::Sandbox::User", "root")]:
        opts += ["-o", f"{k}={v}"]
    (apt / "state/status").touch()
    return opts


# What a step using the private apt directory puts in its recipe.
RECIPE = (apt_mirrors, mirror_stanza, private_apt)
