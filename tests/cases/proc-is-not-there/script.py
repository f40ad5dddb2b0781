import forge
try:
    open('/proc/self/environ').read()
    forge.result('read')
except OSError:
    forge.result('refused')
