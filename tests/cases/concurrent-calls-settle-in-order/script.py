import forge
forge.result(forge.gather([("sleep", {"ms": ms}) for ms in (30, 1, 15)]))
