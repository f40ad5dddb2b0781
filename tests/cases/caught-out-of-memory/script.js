let caught = false;
try { const keep = []; while (true) keep.push(new Array(100000).fill(1)); } catch (e) { caught = true; }
return caught;
