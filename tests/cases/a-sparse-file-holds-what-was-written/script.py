import forge
# A file holds the blocks written into it, not its size: one byte 10 GiB past its end takes one
# block of the quota.
try:
    with open('/work/sparse.bin', 'wb') as f:
        f.seek(10 * 1024 ** 3)
        f.write(b'x')
    forge.result('written')
except OSError:
    forge.result('refused')
