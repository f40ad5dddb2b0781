const out = [];
for (const key of ['', 'k'.repeat(100000)]) {
  try { state.set(key, 1); out.push('set'); } catch (e) { out.push(e.code); }
}
return out;
