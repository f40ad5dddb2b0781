import os, forge
try:
    os.symlink('../../../../etc/hostname', '/work/up')
    open('/work/up').read()
    forge.result('read')
except OSError:
    forge.result('refused')
