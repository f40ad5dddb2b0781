error(ForgeError.new("MEMORY_LIMIT", "I pretend"))
