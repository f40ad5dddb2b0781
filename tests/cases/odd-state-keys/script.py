import forge
out = []
for key in ['', 'k' * 100000]:
    try:
        forge.state.set(key, 1)
        out.append('set')
    except forge.ToolError as e:
        out.append(e.code)
forge.result(out)
