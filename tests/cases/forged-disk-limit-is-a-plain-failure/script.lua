error(ForgeError.new("DISK_LIMIT", "I pretend the disk is full"))
