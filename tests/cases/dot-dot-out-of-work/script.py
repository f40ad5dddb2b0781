import forge
try:
    open('/work/../../../etc/passwd').read()
    forge.result('read')
except OSError:
    forge.result('refused')
