return io.read("a")
