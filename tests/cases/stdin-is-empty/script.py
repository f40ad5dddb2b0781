import sys, forge
forge.result(sys.stdin.read())
