import forge
v = 0
for _ in range(512):
    v = [v]
back = forge.call('echo', v)
d = 0
while isinstance(back, list):
    back, d = back[0], d + 1
forge.result(d)
