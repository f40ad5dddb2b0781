import forge
line = 'x' * 1000
for _ in range(20000):
    print(line)
forge.result('flooded')
