return await tools.call("echo", { a: [1, 2, { b: null }], s: "ü" });
