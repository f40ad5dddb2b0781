import forge
try:
    open('/escape.txt', 'w').write('x')
    forge.result('written')
except OSError:
    forge.result('refused')
