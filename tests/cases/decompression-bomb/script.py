import zlib
bomb = zlib.compress(b'\0' * (32 << 20), 9)
parts = [zlib.decompress(bomb) for _ in range(8)]
