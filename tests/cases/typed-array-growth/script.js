const keep = [];
for (;;) keep.push(new Uint8Array(8 << 20));
