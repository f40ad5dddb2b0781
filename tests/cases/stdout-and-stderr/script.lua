print("to stdout")
eprint("to stderr")
return "printed"
