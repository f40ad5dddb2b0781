raise __import__("forge").ToolError("DISK_LIMIT", "I pretend the disk is full")
