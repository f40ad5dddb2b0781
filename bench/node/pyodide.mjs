// Pyodide (CPython compiled to WASM with Emscripten) inside Node.js: the peer a JavaScript agent
// host would pick to run Python. Prints one JSON object of timings in milliseconds.
import { loadPyodide } from "pyodide";

const p50 = (xs) => xs.sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const t0 = performance.now();
const pyodide = await loadPyodide();
const coldLoad = performance.now() - t0;
pyodide.runPython("1");
const warm = [];
for (let i = 0; i < 300; i++) {
  const t = performance.now();
  pyodide.runPython("1");
  warm.push(performance.now() - t);
}
const cpu = [];
for (let i = 0; i < 5; i++) {
  const t = performance.now();
  pyodide.runPython("sum(range(10**6))");
  cpu.push(performance.now() - t);
}
console.log(JSON.stringify({
  pyodide_cold_load_ms: coldLoad,
  pyodide_warm_run_1_p50_ms: p50(warm),
  pyodide_sum_range_1e6_ms: p50(cpu),
  pyodide_rss_mib: process.memoryUsage().rss / 1048576,
}));
