"""Build hook: the AECP lock-step kernel compiled ahead of time at install time.

``ecocc.dde._lanes_aot`` (``ecocc.dde.lanes._adaptive_lanes_strided``, the
stability map's lock-step groups) and the registry models' generated adaptive
kernels (``ecocc/dde/shipped``, one ``ecocc.dde.shipped.<name>_aot`` each) are
compiled by ``numba.pycc`` for this machine's CPU (see :mod:`ecocc.dde.aot`), so the first run after installing
loads them in milliseconds instead of compiling for about 15 s each.  numba
is a build requirement (``pyproject.toml``), not a run-time one: the modules
load without numba.  The extensions are optional: if a build fails (no C
compiler, no ``numba.pycc``), pip says so and the install goes on; the
kernel is then built on first use (with numba) or the NumPy solver is used.
Everything else is in ``pyproject.toml``.
"""
import sys
import types
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CompileError

HERE = Path(__file__).resolve().parent
#: extension module -> kernel kind (ecocc.dde.aot.KERNELS)
AOT = {"ecocc.dde._lanes_aot": "lanes"}
#: the registry models' generated adaptive kernels (ecocc/dde/shipped, written by ``python -m ecocc.dde.codegen``):
#: extension module -> its source
SHIPPED = {f"ecocc.dde.shipped.{p.stem}_aot": p for p in sorted((HERE / "ecocc" / "dde" / "shipped").glob("ecocc_gen_*.py"))}


def _kernel_modules():
    """``ecocc.dde.aot`` from this source tree without running ``ecocc/__init__.py`` (whose imports, SciPy and
    the rest, are not in the build environment): a bare package object stands in for ``ecocc``."""
    if "ecocc" not in sys.modules:
        pkg = types.ModuleType("ecocc")
        pkg.__path__ = [str(HERE / "ecocc")]
        sys.modules["ecocc"] = pkg
    from ecocc.dde import aot
    return aot


class BuildKernel(build_ext):
    def build_extension(self, ext):
        if ext.name in SHIPPED:
            out = Path(self.get_ext_fullpath(ext.name))
            try:
                built = _kernel_modules().compile_shipped(SHIPPED[ext.name], out.parent, quiet=True)
                built.replace(out)
            except Exception as exc:  # optional extension: setuptools reports it and goes on
                raise CompileError(f"ecocc: the ahead-of-time kernel {ext.name} was not built ({type(exc).__name__}: "
                                   f"{exc}); it will be built on first use if numba is installed") from exc
            return None
        if ext.name not in AOT:
            return super().build_extension(ext)
        out = Path(self.get_ext_fullpath(ext.name))
        kind = AOT[ext.name]
        try:
            aot = _kernel_modules()
            built = aot.compile_module(kind, ext.name.rsplit(".", 1)[1], out.parent, quiet=True)
            built.replace(out)
        except Exception as exc:  # optional extension: setuptools reports it and goes on
            raise CompileError(f"ecocc: the ahead-of-time {kind} kernel was not built ({type(exc).__name__}: "
                               f"{exc}); it will be built on first use if numba is installed") from exc


setup(ext_modules=[Extension(name, sources=[], optional=True) for name in list(AOT) + list(SHIPPED)],
      cmdclass={"build_ext": BuildKernel})
