import forge
try:
    open('/etc/passwd').read()
    forge.result('read')
except OSError:
    forge.result('refused')
