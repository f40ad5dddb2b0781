keep = []
while True:
    keep.append([0] * 100000)
