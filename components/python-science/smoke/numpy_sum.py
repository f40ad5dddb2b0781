import forge
import numpy
import science_preload
forge.result({"sum": int(numpy.arange(10).sum()), "version": numpy.__version__, "missing": science_preload.MISSING})
