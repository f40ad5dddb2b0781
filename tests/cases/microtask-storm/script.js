for (;;) { await null; }
