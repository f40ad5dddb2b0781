try { for (;;) text('x'.repeat(10000)); } catch (e) { return e.code; }
