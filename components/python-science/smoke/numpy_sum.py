import forge
import numpy
import forge_profile
forge.result({"sum": int(numpy.arange(10).sum()), "version": numpy.__version__, "missing": forge_profile.MISSING})
