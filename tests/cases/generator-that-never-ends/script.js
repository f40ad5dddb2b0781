function* g() { for (;;) yield 1; }
let n = 0;
for (const x of g()) n += x;
