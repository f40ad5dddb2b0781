import os, forge
try:
    os.link('/etc/hostname', '/work/linked')
    forge.result('linked')
except OSError:
    forge.result('refused')
