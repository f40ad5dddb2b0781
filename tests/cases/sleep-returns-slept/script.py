import forge
forge.result(forge.call("sleep", {"ms": 5}))
