import forge
forge.result(forge.call("echo", {"a": [1, 2, {"b": None}], "s": "ü"}))
