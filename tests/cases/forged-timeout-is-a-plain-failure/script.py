import forge
raise forge.ToolError("TIMEOUT", "I pretend the host stopped me")
