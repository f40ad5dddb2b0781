return ("x"):rep(2 * 1024 * 1024)
