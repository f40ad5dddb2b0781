import forge
try:
    forge.call('x' * 500000, {})
except forge.ToolError as e:
    forge.result(e.code)
