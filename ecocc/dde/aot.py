"""The adaptive AECP kernel compiled ahead of time (``numba.pycc``).

numba's JIT cache makes a second process skip compilation, but every process
still pays numba's own start-up (importing numba and initialising its typing
and target registries): about 0.3 s on a 2-core machine, against 3-6 ms for
the whole integration of a 4-flow, 60 s dumbbell.  So the adaptive kernel of
:mod:`ecocc.dde.kernels` (the same Python function, no second definition)
is also compiled by ``numba.pycc`` into a small extension module, once per
machine, and later processes load that module without importing numba.

* Where: ``$ECOCC_CACHE_DIR``, else ``$XDG_CACHE_HOME/ecocc``, else
  ``~/.cache/ecocc``.  The module name carries a hash of the kernel sources
  (``kernels.py``, ``history.py``, ``engine.py``, this file), numba's and Python's versions
  and the CPU (the code is built for the host CPU), so a changed kernel or
  another machine sharing the directory gets its own module.
* When: the first numba-engine adaptive run without a module builds it
  (about 15 s, instead of the JIT compilation it replaces).  The module is
  written under a temporary name and renamed, so no process loads a partial
  file, and the build holds a lock in the directory, so concurrent processes
  (a sweep's workers) build it once.
* Old modules (about 1 MB each, one per kernel version) are not removed;
  delete the directory to clean up.  ``python -m ecocc.dde.aot`` builds the
  module for this machine now (e.g. right after installing).
* Fallback: if ``numba.pycc`` or a C compiler is missing, or the build fails,
  the JIT kernel is used and :func:`kernel_info` says why.  Set
  ``ECOCC_AOT=0`` to always use the JIT kernel (the tests compare the two).
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import platform
import sys
import tempfile
import warnings
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_SOURCES = ("kernels.py", "history.py", "engine.py", "aot.py")
_EXPORT = "adaptive_kernel"

_state: dict = {}


def cache_dir() -> Path:
    env = os.environ.get("ECOCC_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ecocc"


def _cpu_id() -> str:
    """The host CPU's model and instruction-set flags (Linux), else the machine name."""
    try:
        with open("/proc/cpuinfo") as fh:
            keep = [ln for ln in fh.read().splitlines()[:40] if ln.startswith(("model name", "flags"))]
        if keep:
            return "\n".join(keep)
    except OSError:
        pass
    return platform.machine() + platform.processor()


def _numba_version() -> str:
    """numba's version file, read without importing numba (or the slower importlib.metadata)."""
    spec = importlib.util.find_spec("numba")
    if spec is None or spec.origin is None:
        raise ImportError("numba is not installed")
    return (Path(spec.origin).parent / "_version.py").read_text()


def module_name() -> str:
    """The extension module's name for these sources, numba, Python and CPU."""
    h = hashlib.sha256()
    for name in _SOURCES:
        h.update((_HERE / name).read_bytes())
    h.update(f"{_numba_version()}|{sys.version}|{_cpu_id()}".encode())
    return "ecocc_aecp_" + h.hexdigest()[:16]


def _module_path(name: str) -> Path | None:
    d = cache_dir()
    if not d.is_dir():
        return None
    for p in d.glob(name + ".*"):
        if p.suffix in (".so", ".pyd"):
            return p
    return None


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, _EXPORT)


def _build(name: str, signature) -> Path:
    """Compile ``kernels._adaptive_kernel`` for ``signature`` into ``cache_dir()/name``."""
    from numba.core.errors import NumbaDeprecationWarning, NumbaPendingDeprecationWarning

    from . import kernels
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaDeprecationWarning)
        warnings.simplefilter("ignore", NumbaPendingDeprecationWarning)
        from numba.pycc import CC
        d = cache_dir()
        d.mkdir(parents=True, exist_ok=True)
        sys.stderr.write(f"ecocc: compiling the adaptive kernel for this machine, once (about 15 s), into {d}\n")
        with tempfile.TemporaryDirectory(dir=d, prefix=".build-") as tmp:
            cc = CC(name)
            cc.output_dir = tmp
            cc.target_cpu = "host"
            cc.verbose = False
            cc.export(_EXPORT, signature)(kernels._adaptive_kernel.py_func)
            cc.compile()
            built = [p for p in Path(tmp).iterdir() if p.name.startswith(name + ".")]
            if len(built) != 1:
                raise RuntimeError(f"numba.pycc wrote {[p.name for p in Path(tmp).iterdir()]}")
            final = d / built[0].name
            os.replace(built[0], final)  # atomic: a concurrent reader sees the whole file or none
    return final


@contextlib.contextmanager
def _build_lock():
    """An exclusive lock on ``cache_dir()/.build.lock`` (POSIX ``flock``; elsewhere no lock: concurrent
    builds then both finish and the atomic rename keeps one)."""
    d = cache_dir()
    d.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with open(d / ".build.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def adaptive_kernel(args):
    """The adaptive kernel to call with ``args``: ahead-of-time compiled if possible, else numba's JIT."""
    if "kernel" in _state:
        return _state["kernel"]
    kernel, info = None, {}
    if os.environ.get("ECOCC_AOT", "1") != "0":
        try:
            name = module_name()
            path = _module_path(name)
            built = False
            if path is None:
                with _build_lock():  # a concurrent process (a sweep's workers) waits, then loads its module
                    path = _module_path(name)
                    if path is None:
                        import numba
                        from numba import types
                        path = _build(name, types.int64(*[numba.typeof(a) for a in args]))
                        built = True
            kernel = _load(path, name)
            info = dict(compiled="aot", module=str(path), built_now=built)
        except Exception as exc:  # no pycc, no compiler, a failed build: the JIT kernel does the same work
            info = dict(compiled="jit", aot_unavailable=f"{type(exc).__name__}: {exc}")
    else:
        info = dict(compiled="jit", aot_unavailable="ECOCC_AOT=0")
    if kernel is None:
        from .kernels import _adaptive_kernel as kernel
    _state.update(kernel=kernel, info=info)
    return kernel


def kernel_info() -> dict:
    """How the adaptive kernel of this process was obtained (empty before the first run)."""
    return dict(_state.get("info", {}))


def reset():
    """Forget the kernel chosen by this process (the tests switch between AOT and JIT)."""
    _state.clear()


def main():
    """``python -m ecocc.dde.aot``: build (or find) this machine's compiled kernels now, e.g. after installing,
    so that the first real run does not pay for the compilation."""
    from ecocc.dde import aot  # the package's instance of this module (``python -m`` runs a second one)
    from ecocc.network import dumbbell
    from ecocc.simulate import simulate
    tr = simulate(dumbbell(1000.0, [0.05, 0.1]), "aecp", t_end_s=0.5, engine="numba")
    info = aot.kernel_info()
    print(f"adaptive kernel: {info.get('compiled')} ({info.get('module') or info.get('aot_unavailable')}); "
          f"test run {tr.status.value}")


if __name__ == "__main__":
    main()
