import forge
try:
    forge.call("echo", "x" * (600 * 1024))
    forge.result("ran")
except forge.ToolError as e:
    forge.result(e.code)
