import forge
import numpy
forge.result(int(numpy.arange(10).sum()))
