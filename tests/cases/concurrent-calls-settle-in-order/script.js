return await Promise.all([30, 1, 15].map((ms) => tools.call("sleep", { ms })));
