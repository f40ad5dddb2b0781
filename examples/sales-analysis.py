# args: --input examples/data/sales.csv --out forge-out/sales
# A CSV analysis that leaves a summary table, an SVG chart and an HTML report in the output
# folder, published with provenance when the run succeeds.
# Run: forge-host run examples/sales-analysis.py --input examples/data/sales.csv --out out/
import csv
from collections import defaultdict

import forge
from forge import charts

rows = forge.read_table("sales.csv")  # numbers are converted: units is an int, unit_price a float
forge.progress("read rows", len(rows), len(rows))

revenue = defaultdict(float)
units = defaultdict(int)
for row in rows:
    revenue[row["region"]] += row["units"] * row["unit_price"]
    units[row["region"]] += row["units"]

regions = sorted(revenue)
with open(forge.output_path("summary.csv"), "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(["region", "units", "revenue"])
    for region in regions:
        writer.writerow([region, units[region], round(revenue[region], 2)])

charts.bar(regions, [round(revenue[r], 2) for r in regions], title="Revenue by region", y_label="revenue", path="revenue.svg")
monthly = defaultdict(float)
for row in rows:
    monthly[row["date"][:7]] += row["units"] * row["unit_price"]
months = sorted(monthly)
charts.line(months, {"revenue": [round(monthly[m], 2) for m in months]}, title="Revenue by month", path="monthly.svg")
charts.report("Sales", [("Revenue by region", "revenue.svg"), ("Revenue by month", "monthly.svg"),
                        ("Summary", charts.table([{"region": r, "units": units[r], "revenue": round(revenue[r], 2)} for r in regions]))])

best = max(regions, key=revenue.get)
forge.text(f"{len(rows)} rows, best region: {best}")
forge.result({"rows": len(rows), "best_region": best, "revenue": {r: round(revenue[r], 2) for r in regions}})
