import forge
try:
    keep = []
    while True:
        keep.append(bytearray(4 << 20))
except MemoryError:
    keep = None
forge.result('recovered')
