import sys
sys.setrecursionlimit(10**7)
def down(n):
    return down(n + 1) + 1
down(0)
