import forge
forge.text("one")
forge.progress("half", 1, 2)
forge.text({"n": 2})
forge.progress("done")
