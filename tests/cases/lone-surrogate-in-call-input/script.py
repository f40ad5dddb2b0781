import forge
try:
    forge.call('echo', {'s': '\ud800'})
    forge.result('sent')
except forge.ToolError as e:
    forge.result(e.code)
except ValueError:
    forge.result('INVALID_INPUT')
