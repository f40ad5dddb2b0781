try:
    import numpy
except ImportError:
    numpy = None
import forge
forge.result(numpy is None)
