// Several tool calls at once: Promise.all runs them concurrently on the host (up to
// --max-concurrency), so four 200 ms calls take about 200 ms, not 800 ms.
// Run: forge-host run examples/concurrent-calls.js --json
const started = Date.now();
const jobs = [200, 200, 200, 200].map((ms, i) => tools.call("sleep", { ms }).then((r) => ({ job: i, ...r })));
const results = await Promise.all(jobs);
progress("all calls done", results.length, jobs.length);
return { results, elapsed_ms: Date.now() - started };
