import forge
try:
    forge.call("echo", "x" * (2 * 1024 * 1024))
    forge.result("ran")
except forge.ToolError as e:
    forge.result([e.code, isinstance(e, Exception)])
