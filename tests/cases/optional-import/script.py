try:
    import scipy
except ImportError:
    scipy = None
import forge
forge.result(scipy is None)
