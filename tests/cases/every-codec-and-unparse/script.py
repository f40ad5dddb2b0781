import ast
import forge

# Codecs and ast.unparse import modules lazily: the engine's snapshot must hold them.
forge.result([
    "café".encode("utf-7").decode("ascii"),
    "привет".encode("cp1251").decode("cp1251"),
    "x".encode("koi8_r").decode("koi8_r"),
    ast.unparse(ast.parse("a+b*2")),
])
