import forge
errors = 0
for i in range(10):
    try:
        forge.call("echo", {"i": i})
    except BaseException:
        errors += 1
forge.result(errors)
