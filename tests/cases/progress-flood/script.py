import forge
i = 0
while i < 100000:
    forge.progress('step', i, 100000)
    i += 1
forge.result(i)
