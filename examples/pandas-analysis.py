# args: --input examples/data/sales.csv --out forge-out/pandas-analysis
# A pandas analysis (python-science engine, picked because the script imports pandas): revenue by
# region (group-by), a region x month pivot table, and a chart, published with provenance.
# Run: forge-host run examples/pandas-analysis.py --input examples/data/sales.csv --out out/
import forge
import pandas as pd
from forge import charts

sales = forge.read_table("sales.csv", as_="pandas", parse_dates=["date"])
sales["revenue"] = sales["units"] * sales["unit_price"]
forge.progress("read rows", len(sales), len(sales))

by_region = (
    sales.groupby("region")
    .agg(units=("units", "sum"), revenue=("revenue", "sum"), orders=("revenue", "size"))
    .round(2)
    .sort_values("revenue", ascending=False)
)
by_region.to_csv(forge.output_path("by_region.csv"))

pivot = sales.pivot_table(index="region", columns=sales["date"].dt.strftime("%Y-%m"),
                          values="revenue", aggfunc="sum", fill_value=0).round(2)
pivot.to_csv(forge.output_path("region_by_month.csv"))

charts.bar(list(by_region.index), list(by_region["revenue"]), title="Revenue by region",
           y_label="revenue", path="revenue_by_region.svg")
monthly = pivot.sum(axis=0)
charts.line(list(monthly.index), {region: list(pivot.loc[region]) for region in pivot.index},
            title="Revenue by month and region", path="revenue_by_month.svg")

forge.text(by_region.to_string())
forge.result({
    "rows": len(sales),
    "best_region": by_region.index[0],
    "revenue": by_region["revenue"].to_dict(),
    "months": list(pivot.columns),
})
