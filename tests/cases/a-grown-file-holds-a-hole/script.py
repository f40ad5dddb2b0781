import os, forge
# Growing a file past the quota by a truncate adds a hole, which holds nothing.
open('/work/t.bin', 'wb').close()
try:
    os.truncate('/work/t.bin', 8 * 1024 ** 3)
    forge.result('grown' if os.stat('/work/t.bin').st_size == 8 * 1024 ** 3 else 'wrong size')
except OSError:
    forge.result('refused')
