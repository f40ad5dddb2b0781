import errno, os, forge
# Past --max-disk a write fails with "no space", which a script may catch and go on.
fd = os.open('/work/big.bin', os.O_WRONLY | os.O_CREAT)
chunk = b'x' * 65536
written = 0
try:
    while True:
        written += os.pwrite(fd, chunk, written)
except OSError as e:
    code = errno.errorcode.get(e.errno)
os.close(fd)
os.remove('/work/big.bin')
open('/work/small.txt', 'w').write('room again')
forge.result([code, written <= 2 * 1024 * 1024])
