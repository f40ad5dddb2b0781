import forge
a = {}
a['self'] = a
forge.result(a)
