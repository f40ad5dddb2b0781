import numpy
print("never here")
