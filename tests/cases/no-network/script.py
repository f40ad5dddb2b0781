import socket, forge
outcomes = []
s = socket.socket()
try:
    s.connect(("93.184.216.34", 80))
    outcomes.append("connected")
except OSError as e:
    outcomes.append("refused")
try:
    socket.getaddrinfo("example.com", 80)
    outcomes.append("resolved")
except OSError:
    outcomes.append("no dns")
forge.result(outcomes)
