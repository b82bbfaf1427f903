"""Ahead-of-time compilation (``numba.pycc``) of the generated kernels, and the kernel cache.

Every compiled kernel -- the adaptive one, the stability map's lock-step one, the fixed-step RK4 one -- is
generated from a model's laws (:mod:`ecocc.dde.codegen`) and compiled on its first use on a machine;
:func:`ecocc.dde.codegen.kernel` calls :func:`compile_module` here.  ``numba.pycc`` is pending deprecation
in numba, so the build requirement pins numba to the tested minor version (``pyproject.toml``).

Why ahead of time: numba's JIT cache makes a second process skip compilation, but every process still pays
numba's own start-up (importing numba and initialising its typing and target registries): about 0.3 s on a
2-core machine, against 3-6 ms for the whole integration of a 4-flow, 60 s dumbbell.  So the kernel, the same
Python function the JIT runs (no second definition), is compiled by ``numba.pycc`` into a small extension
module that loads without importing numba, compiled to release the GIL while it runs (``numba.pycc`` has no
option for that; :func:`compile_module` sets numba's ``release_gil`` compiler flag for the duration of the
build), so threads run it in parallel.

Nothing is compiled at install time any more: the kernels are per model and generated with SymPy from the
models' laws, which the build environment (numba only) does not have.  (Until this revision the AECP
lock-step kernel, a hand transcription, was built by ``setup.py``.)  A kernel comes from, in this order:

1. **A module built on first use**, if numba is installed: in ``$ECOCC_CACHE_DIR``, else
   ``$XDG_CACHE_HOME/ecocc``, else ``~/.cache/ecocc``.  The module name carries a hash of the generated
   source, the kernel kind, this CPU, numba's and Python's versions.  The first run without a module builds
   it (15 s to a few minutes on a busy machine); ``python -m ecocc.dde.aot`` does it now for every model.
   The module is written under a temporary name and renamed, so no process loads a partial file, and the
   build holds a lock in the directory, so concurrent processes (a sweep's workers) build it once.  Old
   modules (about 1 MB each) are not removed; delete the directory to clean up.
2. **numba's JIT** (cached on disk by numba) if that build fails; the run's ``settings`` / the map's
   ``attrs["kernel"]`` say why.

``ECOCC_AOT=0`` always uses the JIT kernels (the tests compare the two); ``ECOCC_AOT=cache`` is accepted
as a synonym of the default (there is no installed module to skip).
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

#: members per lock-step group of the lanes kernel (a compile-time constant: the lane loops are unrolled;
#: here, not in ``lanes.py``, so that grouping the members needs no numba)
LANES = 8

_EXPORT = "kernel"

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


def _stamp_function(value: int):
    def stamp():
        return value
    return stamp


@contextlib.contextmanager
def _release_gil():
    """``numba.pycc`` compiles every export with fresh default compiler flags; for the duration of a build, the
    flags class it uses sets ``release_gil`` (the ``nogil=True`` of ``@jit``), so the exported wrappers
    release the GIL around the compiled call."""
    import numba.pycc.compiler as pc
    base = pc.Flags
    if not hasattr(base, "release_gil"):
        raise RuntimeError("this numba's compiler flags have no release_gil option")

    class _NoGilFlags(base):
        def __init__(self, *args, **kw):
            super().__init__(*args, **kw)
            self.release_gil = True

    pc.Flags = _NoGilFlags
    try:
        yield
    finally:
        pc.Flags = base


def compile_module(kind: str, name: str, out_dir: Path, *, func, sig, stamp: int, quiet: bool = False) -> Path:
    """Compile a generated kernel into an extension module with ``numba.pycc``.

    Built in a temporary directory inside ``out_dir`` and renamed, so a concurrent reader sees the whole file
    or none.  The module exports ``kernel`` (``func``, releasing the GIL) and ``stamp`` (returning ``stamp``).

    Parameters
    ----------
    kind : str
        What the kernel is, for messages.
    name : str
        The module's name.
    out_dir : Path
    func : function
        The Python function (a generated kernel, :mod:`ecocc.dde.codegen`).
    sig : numba signature
    stamp : int
    quiet : bool
        No message on stderr.

    Returns
    -------
    Path
        The module file.
    """
    from numba.core.errors import NumbaDeprecationWarning, NumbaPendingDeprecationWarning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaDeprecationWarning)
        warnings.simplefilter("ignore", NumbaPendingDeprecationWarning)
        from numba.pycc import CC
        out_dir.mkdir(parents=True, exist_ok=True)
        if not quiet:
            sys.stderr.write(f"ecocc: compiling the {kind} kernel for this machine, once (15 s to a few minutes "
                             f"on a busy machine), into {out_dir}\n")
        with tempfile.TemporaryDirectory(dir=out_dir, prefix=".build-") as tmp:
            cc = CC(name)
            cc.output_dir = tmp
            cc.target_cpu = "host"
            cc.verbose = False
            cc.export(_EXPORT, sig)(func)
            cc.export("stamp", "int64()")(_stamp_function(stamp))
            with _release_gil():
                cc.compile()
            built = [p for p in Path(tmp).iterdir() if p.name.startswith(name + ".")]
            if len(built) != 1:
                raise RuntimeError(f"numba.pycc wrote {[p.name for p in Path(tmp).iterdir()]}")
            final = out_dir / built[0].name
            os.replace(built[0], final)
    return final


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
    return mod


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


AOT_MODES = ("1", "0", "cache")


def aot_mode() -> str:
    """``$ECOCC_AOT``: ``1`` (default) or ``cache``: the module built into the kernel cache (on first use), else the
    JIT kernel; ``0``: always the JIT kernel."""
    from ..errors import InputError
    mode = os.environ.get("ECOCC_AOT", "1")
    if mode not in AOT_MODES:
        raise InputError("ECOCC_AOT", mode, f"one of {AOT_MODES} (environment variable)")
    return mode


def reset():
    """Forget the kernels chosen by this process (the tests switch between AOT and JIT)."""
    cg = sys.modules.get(f"{__package__}.codegen")
    if cg is not None:
        cg._kernels.clear()


def main():
    """``python -m ecocc.dde.aot``: build (or find) this machine's compiled kernels now -- the adaptive one of
    every registered model the generated kernels serve (and numba's cache of it) -- e.g. after installing, so
    that the first real run does not pay for the compilation.  The lock-step and fixed-step kernels are built
    on their first use."""
    from ecocc.dde.codegen import warm
    from ecocc.dde.engine import codegen_gap
    from ecocc.models import REGISTRY, get_model
    served = [n for n in REGISTRY if codegen_gap(get_model(n)) is None]
    for name, (wall, path) in warm(served).items():
        print(f"adaptive kernel of {name}: ready in {wall:.1f} s ({path})")


if __name__ == "__main__":
    main()
