import sys, forge
line = 'x' * 1000
for _ in range(20000):
    print(line, file=sys.stderr)
forge.result('flooded')
