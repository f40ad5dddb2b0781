import forge
for i in range(10):
    forge.call("echo", {"i": i})
forge.result("unreachable")
