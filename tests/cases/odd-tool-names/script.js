const out = [];
for (const name of ['', '\u0000echo', '../echo']) {
  try { await tools.call(name, {}); out.push('called'); } catch (e) { out.push(e.code); }
}
return out;
