return "x".repeat(2 * 1024 * 1024);
