throw new ForgeError("TIMEOUT", "I pretend the host stopped me");
