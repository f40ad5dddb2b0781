# The workspace tools as Python functions: sum a CSV found in the workspace, then write a
# summary next to it when the run allows writes. Without --allow-write the write is denied
# (TOOL_DENIED) and the script says so instead of failing.
# args: --workspace examples/data
# Run: forge-host run examples/workspace-report.py --workspace examples/data [--allow-write]
import csv
import io

import forge

listed = forge.tools.workspace.list()
csv_files = [e["name"] for e in listed["entries"] if e["name"].endswith(".csv")]
totals = {}
for name in csv_files:
    text = forge.tools.workspace.read(path=name)["content"]
    for row in csv.DictReader(io.StringIO(text)):
        totals[row["region"]] = totals.get(row["region"], 0) + int(row["units"])
summary = "\n".join(f"{region},{units}" for region, units in sorted(totals.items()))
try:
    written = forge.tools.workspace.write(path="summary/units-by-region.csv", content="region,units\n" + summary + "\n")
except forge.ToolError as error:
    written = {"not written": error.code}
forge.result({"csv_files": csv_files, "units_by_region": totals, "summary": written})
