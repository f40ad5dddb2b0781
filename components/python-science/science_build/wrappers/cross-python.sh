#!/bin/sh
# python for meson: the build venv's CPython with componentize-py's WASI sysconfigdata (it also
# runs numpy's code generators). Installed as WORK/bin/cross-python by the sysroot step, which
# fills in the @-delimited names.
export _PYTHON_SYSCONFIGDATA_NAME=_sysconfigdata__wasi_wasm32-wasi
export PYTHONPATH=@CROSS_PYTHONPATH@${PYTHONPATH:+:$PYTHONPATH}
export SCIENCE_PY_INCLUDE=@PY_INCLUDE@
exec @PYTHON@ "$@"
