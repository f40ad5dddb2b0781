import os, forge
open('/output/t.bin', 'wb').close()
try:
    os.truncate('/output/t.bin', 8 * 1024 ** 3)
    forge.result('grown')
except OSError:
    forge.result('refused')
