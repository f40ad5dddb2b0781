error(ForgeError.new("TIMEOUT", "I pretend the host stopped me"))
