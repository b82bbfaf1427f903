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

The kernels are compiled in parallel worker processes on Linux (one per CPU, at most one per kernel; numba's
compiler holds a global lock, so threads would not help), and a module already built for this source and CPU (its
``stamp()``) is kept: ``pip install -e ".[extra]"`` after ``pip install -e .`` does not compile them again.
"""
import concurrent.futures
import functools
import multiprocessing
import os
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


def _built_stamp(path: Path, name: str):
    """The ``stamp()`` of the extension module at ``path`` (it loads without numba), or None."""
    if not path.is_file():
        return None
    try:
        return _kernel_modules()._load(path, name).stamp()
    except Exception:  # a broken or foreign file: built again
        return None


class BuildKernel(build_ext):
    def _kernel_job(self, ext):
        """``(callable building ext into a temporary file, its expected stamp)``."""
        aot = _kernel_modules()
        out_dir = Path(self.get_ext_fullpath(ext.name)).parent
        if ext.name == USERINT:
            from ecocc.dde import userint
            return functools.partial(userint.compile_installed, out_dir, quiet=True), userint.stamp()
        src = SHIPPED[ext.name]
        return functools.partial(aot.compile_shipped, src, out_dir, quiet=True), aot.generated_stamp(src.stem)

    def build_extensions(self):
        kernels = [e for e in self.extensions if e.name in SHIPPED or e.name == USERINT]
        for ext in self.extensions:
            if ext not in kernels:
                with self._filter_build_errors(ext):
                    self.build_extension(ext)
        todo, results = [], []
        for ext in kernels:
            out = Path(self.get_ext_fullpath(ext.name))
            job_stamp, exc = _outcome(functools.partial(self._kernel_job, ext))
            if exc is not None:
                results.append((ext, out, (None, exc)))
            elif _built_stamp(out, ext.name) != job_stamp[1]:  # else: built for this source and CPU already
                todo.append((ext, out, job_stamp[0]))
        jobs = min(len(todo), os.cpu_count() or 1)
        if jobs > 1 and sys.platform.startswith("linux"):
            # forked workers: the stand-in ``ecocc`` package and the job functions are already in sys.modules
            ctx = multiprocessing.get_context("fork")
            with concurrent.futures.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
                futures = [(ext, out, pool.submit(job)) for ext, out, job in todo]
                results += [(ext, out, _outcome(fut.result)) for ext, out, fut in futures]
        else:
            results += [(ext, out, _outcome(job)) for ext, out, job in todo]
        for ext, out, (built, exc) in results:
            with self._filter_build_errors(ext):  # optional extension: setuptools reports it and goes on
                if exc is not None:
                    raise CompileError(f"ecocc: the ahead-of-time kernel {ext.name} was not built "
                                       f"({type(exc).__name__}: {exc}); it will be built on first use if numba is "
                                       f"installed") from exc
                built.replace(out)


def _outcome(call):
    """``(call(), None)``, or ``(None, the exception)``."""
    try:
        return call(), None
    except Exception as exc:  # noqa: BLE001  (a worker's crash included: BrokenProcessPool)
        return None, exc


setup(ext_modules=[Extension(name, sources=[], optional=True) for name in [*SHIPPED, USERINT]],
      cmdclass={"build_ext": BuildKernel})
