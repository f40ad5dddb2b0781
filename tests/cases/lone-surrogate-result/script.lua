return "a\u{D800}b"
