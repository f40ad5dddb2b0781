return "x".repeat(2 ** 27).length;
