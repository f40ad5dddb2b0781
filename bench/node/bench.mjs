// Peers of forge-host's QuickJS engine, measured in one process: QuickJS compiled to WASM
// (quickjs-emscripten) inside Node.js, the way a JavaScript agent host would sandbox a script.
// Prints one JSON object of timings in milliseconds.
import { Worker } from "node:worker_threads";
import { newQuickJSWASMModule, getQuickJS } from "quickjs-emscripten";

const p50 = (xs) => xs.sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const time = (f) => { const t = performance.now(); f(); return performance.now() - t; };
const timeAsync = async (f) => { const t = performance.now(); await f(); return performance.now() - t; };

const body = (src) => `(async function () {${src}\n})()`;
function runIn(QuickJS, src) {
  const runtime = QuickJS.newRuntime();
  const vm = runtime.newContext();
  const result = vm.evalCode(body(src));
  const promise = vm.unwrapResult(result);
  runtime.executePendingJobs();
  const state = vm.getPromiseState(promise);
  promise.dispose();
  if (state.type === "fulfilled") state.value.dispose();
  vm.dispose();
  runtime.dispose();
}

const shared = await getQuickJS();
for (let i = 0; i < 20; i++) runIn(shared, "return 1");
const sharedRuns = [];
for (let i = 0; i < 300; i++) sharedRuns.push(time(() => runIn(shared, "return 1")));

const freshRuns = [];
for (let i = 0; i < 50; i++) {
  freshRuns.push(await timeAsync(async () => runIn(await newQuickJSWASMModule(), "return 1")));
}

const workerSource = `
  const { parentPort } = require("node:worker_threads");
  import("quickjs-emscripten").then(async ({ getQuickJS }) => {
    const QuickJS = await getQuickJS();
    const vm = QuickJS.newContext();
    vm.unwrapResult(vm.evalCode("1")).dispose();
    vm.dispose();
    parentPort.postMessage("done");
  });`;
const workerRuns = [];
for (let i = 0; i < 20; i++) {
  workerRuns.push(await timeAsync(() => new Promise((resolve, reject) => {
    const worker = new Worker(workerSource, { eval: true });
    worker.once("message", () => { worker.terminate().then(resolve); });
    worker.once("error", reject);
  })));
}

const cpu = "let s = 0; for (let i = 1; i <= 10000000; i++) s += i; return s;";
const cpuRuns = [];
for (let i = 0; i < 3; i++) cpuRuns.push(time(() => runIn(shared, cpu)));

console.log(JSON.stringify({
  node_shared_module_return_1_p50_ms: p50(sharedRuns),
  node_fresh_module_return_1_p50_ms: p50(freshRuns),
  node_worker_per_run_p50_ms: p50(workerRuns),
  node_cpu_sum_1e7_ms: p50(cpuRuns),
}));
