error({ code = "TOOL_FAILED", message = "mine" })
