# Imported by cross-python (it is on its PYTHONPATH): meson also reads
# sysconfig.get_paths()['include'], computed from the running (host) interpreter; point it at
# the WASI headers too.
import os, sysconfig
_inc = os.environ.get('SCIENCE_PY_INCLUDE')
if _inc:
    _get_paths = sysconfig.get_paths
    def get_paths(*a, **k):
        p = dict(_get_paths(*a, **k))
        p['include'] = p['platinclude'] = _inc
        return p
    sysconfig.get_paths = get_paths
