// The tools of a real MCP server as functions: the official filesystem server, which forge-host
// starts from examples/mcp-servers.json (npx fetches it once) over examples/data, and ends when
// the run ends. Only its read tools are used; its write tools would need --allow-write.
// args: --mcp-config examples/mcp-servers.json
// Run: forge-host run examples/filesystem-mcp.js --mcp-config examples/mcp-servers.json
// Its declarations: forge-host tools --format ts --mcp-config examples/mcp-servers.json
const listing = await tools.fs.list_directory({ path: "." });
const files = listing.content.split(/\r?\n/).filter((l) => l.startsWith("[FILE] ")).map((l) => l.slice(7));
const { content: found } = await tools.fs.search_files({ path: ".", pattern: "*.csv" });
const csv = found.split(/\r?\n/)[0];
const { content: head } = await tools.fs.read_text_file({ path: csv, head: 4 });
const [header, ...rows] = head.trim().split(/\r?\n/);
progress("read the first rows", rows.length, rows.length);
return {
  files,
  csv,
  columns: header.split(","),
  first_rows: rows.map((row) => Object.fromEntries(row.split(",").map((v, i) => [header.split(",")[i], v]))),
};
