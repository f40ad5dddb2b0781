// Shared state: a counter that survives across runs of the same session. Changes are committed
// only when the run succeeds, so a run that throws leaves the counter as it was.
// Run it twice: forge-host run examples/state-counter.js --session demo
const runs = (state.get("runs") ?? 0) + 1;
state.set("runs", runs);
state.set("last_run", new Date().toISOString());
text(`this session has run ${runs} time(s)`);
return { runs, keys: state.keys() };
