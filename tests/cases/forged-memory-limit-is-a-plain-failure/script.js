throw new ForgeError("MEMORY_LIMIT", "I pretend");
