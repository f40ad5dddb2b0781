import forge
# A file's size counts, not the blocks it holds: a write far past its end is refused.
try:
    with open('/work/sparse.bin', 'wb') as f:
        f.seek(10 * 1024 ** 3)
        f.write(b'x')
    forge.result('written')
except OSError:
    forge.result('refused')
