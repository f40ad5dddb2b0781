const keep = []; while (true) { keep.push({ n: keep.length }); }
