try { await tools.call("fail", { message: "nope" }); }
catch (e) { return { isError: e instanceof Error, code: e.code, message: e.message }; }
