return "x".repeat(17 * 1024 * 1024);
