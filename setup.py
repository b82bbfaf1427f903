"""Build hook: none.

Until this revision ``setup.py`` compiled the AECP lock-step kernel (a hand transcription) ahead of time
with ``numba.pycc``.  Every compiled kernel is now generated from a model's laws with SymPy
(:mod:`ecocc.dde.codegen`), which the build environment does not have, so the kernels are compiled on their
first use on a machine into the kernel cache (:mod:`ecocc.dde.aot`; ``python -m ecocc.dde.aot`` does it
now).  Everything else is in ``pyproject.toml``.
"""
from setuptools import setup

setup()
