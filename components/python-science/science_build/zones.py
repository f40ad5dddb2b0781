"""The `tzdata` step: the pinned tzdata wheel (the IANA time zone database) unpacked into
WORK/site-tzdata, a `-p` path of both CPython profiles' components (xtask's stdlib build runs the
steps up to `compression`, this one among them). The app's `tz_database.py` serves its zone
files from memory at run time."""

import shutil
import zipfile

from .pins import TZDATA
from .steps import Step, fresh_or_log, log, verify


def step_tzdata(c):
    """Unpack the tzdata wheel (checked against its pin again) into c.site_tzdata."""
    wheel = c.tzdata_wheel()
    step = Step(c.work, "tzdata", [wheel], [step_tzdata, TZDATA])
    if fresh_or_log(step) and (c.site_tzdata / "tzdata/__init__.py").exists():
        return
    verify(wheel, TZDATA[2])
    staged = c.work / "site-tzdata.partial"
    if staged.exists():
        shutil.rmtree(staged)
    with zipfile.ZipFile(wheel) as z:
        z.extractall(staged)
    if c.site_tzdata.exists():
        shutil.rmtree(c.site_tzdata)
    staged.rename(c.site_tzdata)
    files = sum(1 for p in c.site_tzdata.rglob("*") if p.is_file())
    log(f"tzdata: {TZDATA[1]}, {files} files in {c.site_tzdata}")
    step.done()
