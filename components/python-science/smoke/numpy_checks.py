import forge, time
t0 = time.perf_counter()
import numpy as np
r = {}
a = np.arange(12, dtype=np.float64).reshape(3, 4)
r["matmul"] = (a @ a.T).tolist()
m = np.array([[4.0, 1.0], [2.0, 3.0]])
r["inv_ok"] = bool(np.allclose(np.linalg.inv(m) @ m, np.eye(2)))
r["solve"] = np.linalg.solve(m, np.array([1.0, 2.0])).tolist()
r["eig"] = sorted(np.linalg.eigvals(m).real.round(6).tolist())
u, s, vt = np.linalg.svd(np.random.default_rng(0).normal(size=(5, 3)))
r["svd_ok"] = bool(np.allclose((u[:, :3] * s) @ vt, u[:, :3] @ np.diag(s) @ vt))
r["fft"] = np.round(np.abs(np.fft.fft(np.sin(np.linspace(0, 2 * np.pi * 4, 64, endpoint=False)))), 6)[:6].tolist()
g = np.random.default_rng(42)
x = g.normal(size=200_000)
r["mean_std"] = [round(float(x.mean()), 3), round(float(x.std()), 3)]
t = time.perf_counter(); y = np.sort(g.random(2_000_000)); r["sort2M_s"] = round(time.perf_counter() - t, 3)
r["sorted"] = bool(np.all(y[1:] >= y[:-1]))
b = g.random((300, 300)); t = time.perf_counter(); b @ b; r["matmul300_s"] = round(time.perf_counter() - t, 3)
r["unique"] = np.unique(np.array([3, 1, 2, 3, 1])).tolist()
ma = np.ma.masked_array([1, 2, 3], mask=[0, 1, 0]); r["ma_sum"] = int(ma.sum())
r["poly"] = np.polynomial.Polynomial([1, 2, 3])(2.0)
r["dt"] = str(np.datetime64("2024-02-28") + np.timedelta64(2, "D"))
r["strings"] = np.strings.upper(np.array(["ab", "cd"])).tolist()
r["intp"] = str(np.dtype(np.intp)); r["int_default"] = str(np.array([1]).dtype)
r["legacy_random"] = float(np.random.random())
try:
    np.ones(10**10)
except Exception as e:
    r["big"] = type(e).__name__
r["elapsed_s"] = round(time.perf_counter() - t0, 3)
forge.result(r)
