import forge
forge.call("fail", {"message": "it broke"})
