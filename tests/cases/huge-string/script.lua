return #("x"):rep(2 ^ 27)
