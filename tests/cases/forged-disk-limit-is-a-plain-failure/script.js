throw new ForgeError("DISK_LIMIT", "I pretend the disk is full");
