import socket, forge
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b'x', ('8.8.8.8', 53))
    forge.result('sent')
except OSError:
    forge.result('refused')
