import forge, io, time
t0 = time.perf_counter()
import numpy as np
import pandas as pd
r = {"pandas": pd.__version__}
csv = "date,region,product,units,price\n" + "\n".join(
    f"2024-0{1 + i % 3}-{10 + i % 15},{['north','south','east'][i % 3]},{['a','b'][i % 2]},{i % 7 + 1},{1.5 + i % 4}"
    for i in range(300))
df = pd.read_csv(io.StringIO(csv), parse_dates=["date"])
df["revenue"] = df.units * df.price
r["dtypes"] = {k: str(v) for k, v in df.dtypes.items()}
r["groupby"] = df.groupby("region")["revenue"].agg(["sum", "mean", "count"]).round(3).to_dict()
r["pivot"] = df.pivot_table(index="region", columns="product", values="units", aggfunc="sum").to_dict()
prices = pd.DataFrame({"product": ["a", "b"], "cost": [1.0, 2.0]})
r["merge_rows"] = len(df.merge(prices, on="product"))
r["resample"] = df.set_index("date").resample("MS")["revenue"].sum().round(2).to_json(date_format="iso")
r["rolling"] = df["units"].rolling(5).mean().iloc[-3:].round(3).tolist()
r["describe"] = df["price"].describe().round(3).to_dict()
try:
    r["tz"] = str(pd.Timestamp("2024-06-01 12:00", tz="Europe/Paris").tz_convert("UTC"))
except Exception as e:
    r["tz"] = repr(e)
try:
    import zoneinfo
    r["zoneinfo"] = str(zoneinfo.ZoneInfo("America/New_York"))
except Exception as e:
    r["zoneinfo"] = repr(e)
r["elapsed_s"] = round(time.perf_counter() - t0, 3)
forge.result(r)
