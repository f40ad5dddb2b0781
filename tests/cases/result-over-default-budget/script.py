import forge
forge.result("x" * (17 * 1024 * 1024))
