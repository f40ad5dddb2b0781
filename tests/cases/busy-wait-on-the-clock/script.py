import time
end = time.time() + 60
while time.time() < end:
    pass
