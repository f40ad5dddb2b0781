const keep = []; let s = "x".repeat(1 << 20); while (true) { keep.push(s.repeat(4)); }
