return await tools.call("sleep", { ms: 5 });
