import forge
try:
    import ctypes
    forge.result('imported')
except ImportError:
    forge.result('refused')
