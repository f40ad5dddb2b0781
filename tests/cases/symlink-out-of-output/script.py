import os, forge
try:
    os.symlink('/etc/passwd', '/output/leak')
    open('/output/leak').read()
    forge.result('read')
except OSError:
    forge.result('refused')
