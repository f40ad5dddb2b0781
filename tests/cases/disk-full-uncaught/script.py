with open('/work/fill.bin', 'wb') as f:
    while True:
        f.write(b'x' * 65536)
