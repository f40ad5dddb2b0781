import forge
a = []
a.append(a)
try:
    forge.call('echo', a)
    forge.result('sent')
except (ValueError, TypeError, RecursionError):
    forge.result('refused')
