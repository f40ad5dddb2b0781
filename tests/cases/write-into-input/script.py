import forge
try:
    open('/input/new.txt', 'w').write('x')
    forge.result('written')
except OSError:
    forge.result('refused')
