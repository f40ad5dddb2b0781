// Tools as functions over a folder: list it, search it, read what matched. Nothing is written
// (workspace.write would need --allow-write); `forge-host tools --format ts --workspace
// examples/data` prints these functions' declarations.
// args: --workspace examples/data
// Run: forge-host run examples/workspace-search.js --workspace examples/data
const { entries } = await tools.workspace.list();
const { matches } = await tools.workspace.search({ pattern: ",north," });
const first = matches.length > 0 ? await tools.workspace.read({ path: matches[0].path }) : null;
progress("searched", entries.length, entries.length);
return {
  files: entries.filter((e) => e.kind === "file").map((e) => `${e.name} (${e.size} bytes)`),
  north_rows: matches.length,
  first_match: matches[0] ?? null,
  lines_in_that_file: first ? first.content.split("\n").filter((l) => l.length > 0).length : 0,
};
