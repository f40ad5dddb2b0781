import socket, forge
try:
    s = socket.socket()
    s.bind(('0.0.0.0', 8080))
    s.listen()
    forge.result('listening')
except OSError:
    forge.result('refused')
