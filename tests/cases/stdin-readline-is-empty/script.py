import sys, forge
forge.result([sys.stdin.readline(), sys.stdin.buffer.read(10).decode()])
