const e = new Error("mine");
e.code = "TOOL_FAILED";
throw e;
