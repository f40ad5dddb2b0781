import forge
deep = 0
for _ in range(600):
    deep = [deep]
try:
    forge.state.set('deep', deep)
    forge.result('set')
except forge.ToolError as e:
    forge.result(e.code)
