import forge
try:
    with open("/input/new.txt", "w") as f:
        f.write("x")
    forge.result("wrote")
except OSError as e:
    forge.result(type(e).__name__)
