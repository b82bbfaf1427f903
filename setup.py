"""Build hook: the registry models' generated adaptive kernels, compiled ahead of time at install time.

Every compiled kernel is generated from a model's laws with SymPy (:mod:`ecocc.dde.codegen`), which the
build environment does not have; so the generated sources of the registry models (default options) are
shipped in the package (``ecocc/dde/shipped``, written by ``python -m ecocc.dde.codegen``), and this step
compiles each with ``numba.pycc`` into ``ecocc.dde.shipped.<name>_aot`` for this machine's CPU, so that
the first run of a registry model after installing loads its kernel without generating or compiling it
(without SymPy, without importing numba).  numba is a build requirement (``pyproject.toml``), not a
run-time one.  The extensions are optional: if a build fails (no C compiler, no ``numba.pycc``), pip says
so and the install goes on; the kernel is then built on first use into the kernel cache
(:mod:`ecocc.dde.aot`).  Everything else is in ``pyproject.toml``.
"""
import sys
import types
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CompileError

HERE = Path(__file__).resolve().parent
#: extension module -> its shipped generated source
SHIPPED = {f"ecocc.dde.shipped.{p.stem}_aot": p
           for pat in ("ecocc_gen_*.py", "ecocc_mix_*.py")  # single models and mixed composites
           for p in sorted((HERE / "ecocc" / "dde" / "shipped").glob(pat))}
#: the shared integrator of user DDEs (ecocc.dde.userint): its right-hand side is an argument
USERINT = "ecocc.dde.shipped._userint_aot"


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
        if ext.name not in SHIPPED and ext.name != USERINT:
            return super().build_extension(ext)
        out = Path(self.get_ext_fullpath(ext.name))
        try:
            if ext.name == USERINT:
                _kernel_modules()  # the stand-in ecocc package first
                from ecocc.dde import userint
                built = userint.compile_installed(out.parent, quiet=True)
            else:
                built = _kernel_modules().compile_shipped(SHIPPED[ext.name], out.parent, quiet=True)
            built.replace(out)
        except Exception as exc:  # optional extension: setuptools reports it and goes on
            raise CompileError(f"ecocc: the ahead-of-time kernel {ext.name} was not built ({type(exc).__name__}: "
                               f"{exc}); it will be built on first use if numba is installed") from exc


setup(ext_modules=[Extension(name, sources=[], optional=True) for name in [*SHIPPED, USERINT]],
      cmdclass={"build_ext": BuildKernel})
