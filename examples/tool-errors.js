// Tool failures are ordinary JavaScript errors with a stable `.code`, so a script can recover.
// Run: forge-host run examples/tool-errors.js
const outcomes = [];
for (const [name, input] of [["echo", { ok: true }], ["fail", { message: "disk on fire" }], ["missing", {}]]) {
  try {
    outcomes.push({ name, ok: await tools.call(name, input) });
  } catch (error) {
    outcomes.push({ name, code: error.code, message: error.message });
  }
}
const catalog = (await tools.list()).map((tool) => `${tool.name} (${tool.effect})`);
return { outcomes, catalog };
