import forge
raise forge.ToolError("MEMORY_LIMIT", "I pretend")
