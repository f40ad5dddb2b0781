import forge
try:
    while True:
        forge.text('x' * 10000)
except forge.ToolError as e:
    forge.result(e.code)
