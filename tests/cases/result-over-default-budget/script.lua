return ("x"):rep(17 * 1024 * 1024)
