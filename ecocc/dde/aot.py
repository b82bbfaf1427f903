"""The compiled AECP lock-step kernel, ahead of time (``numba.pycc``).

Since the adaptive single-run kernel is generated from each model's laws
(:mod:`ecocc.dde.codegen`, numba JIT with its on-disk cache; warm it with
``python -m ecocc.dde.aot``), only the stability map's AECP lock-step kernel
is built here.  What follows describes that route; ``numba.pycc`` is pending
deprecation in numba, so the build requirement pins numba to the tested minor
version (``pyproject.toml``).

numba's JIT cache makes a second process skip compilation, but every process
still pays numba's own start-up (importing numba and initialising its typing
and target registries): about 0.3 s on a 2-core machine, against 3-6 ms for
the whole integration of a 4-flow, 60 s dumbbell; and the first use on a
machine compiles (15-30 s).  So the kernel, the same Python function the
JIT runs (no second definition), is also compiled by ``numba.pycc`` into
a small extension module that loads without importing numba:

* ``"lanes"``: :func:`ecocc.dde.lanes._adaptive_lanes_strided` (the
  lock-step groups of a stability map, every ``stride``-th one;
  :func:`ecocc.dde.engine.solve_adaptive_aecp_batch` calls it from a thread
  pool, one call per core).

Both are compiled to release the GIL while they run, so threads run them in
parallel.  (``numba.pycc`` has no option for that; :func:`compile_module`
sets numba's ``release_gil`` compiler flag for the duration of the build.)

A kernel comes from, in this order:

1. **The module built at install time**: ``ecocc.dde._lanes_aot``, compiled by the ``build_ext`` step of
   ``setup.py`` (numba is a build requirement, so this happens in pip's
   build environment even when numba is not installed to run).  Each exports
   ``stamp()``, a hash of the kernel sources, signatures and the CPU it was
   built for (:func:`source_stamp`); a module whose stamp differs from this
   checkout's (sources edited after an editable install, a wheel copied to
   another CPU) is not used.  If the build fails (no C compiler, no
   ``numba.pycc``), the install still succeeds without the module.
2. **A module built on first use**, if numba is installed:
   ``$ECOCC_CACHE_DIR``, else ``$XDG_CACHE_HOME/ecocc``, else
   ``~/.cache/ecocc``.  The module name carries the stamp plus numba's and
   Python's versions.  The first run without a module builds it (about 15 s
   per kernel, instead of the JIT compilation it replaces);
   ``python -m ecocc.dde.aot`` does it now.  The module is written under a
   temporary name and renamed, so no process loads a partial file, and the
   build holds a lock in the directory, so concurrent processes (a sweep's
   workers) build it once.  Old modules (about 1 MB each, one per kernel
   version) are not removed; delete the directory to clean up.
3. **numba's JIT** (cached on disk by numba), and :func:`kernel_info` says
   why the modules were not used.

``ECOCC_AOT=0`` always uses the JIT kernels (the tests compare the two);
``ECOCC_AOT=cache`` skips the installed modules (the benchmarks time the
first use without them).
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
_SOURCES = ("kernels.py", "history.py", "lanes.py")  # the compiled code's sources (see source_stamp)

#: the adaptive kernel's argument types by name, in numba's signature syntax: every array is a fresh,
#: writable, C-contiguous one (``engine._adaptive_args`` makes sure; a test checks these against
#: ``numba.typeof`` of the arguments it builds).  Static, so that the install-time build needs numba but
#: not a model.
ADAPTIVE_TYPES = dict(
    y0="float64[::1]", t_end="float64", rtol="float64", atol_v="float64[::1]", max_step="float64",
    first_step="float64", max_steps="int64", bps="float64[::1]", t_eval="float64[::1]", out_y="float64[:, ::1]",
    Cc="float64[::1]", A="float64[:, ::1]", Bw="float64[::1]", E="float64[::1]", Pd="float64[:, ::1]",
    expo="float64", dmin="float64", keep_s="float64", dcomp="int64[::1]", P="int64", L="int64",
    fps="int64[::1]", pl="int64[::1]", bwd="float64[::1]", lptr="int64[::1]", lflows="int64[::1]",
    start="float64[::1]", stop="float64[::1]", C="float64[::1]", buf="float64[::1]", ctimes="float64[::1]",
    ctable="float64[:, ::1]", alpha="float64", beta="float64", Tq="float64", q0="float64[::1]",
    counters="int64[::1]", reals="float64[::1]")
#: the same for the lock-step groups (``lanes._adaptive_lanes_strided``): per-group arrays gain a leading
#: group axis, and lanes have their own gains, counters and status codes
LANES_TYPES = dict(ADAPTIVE_TYPES, first="int64", stride="int64", bps_ptr="int64[::1]", n_int="int64",
                   ocomp="int64[::1]", overlap="boolean", y0="float64[:, ::1]", out_y="float64[:, :, ::1]",
                   dmin="float64[::1]", keep_s="float64[::1]", bwd="float64[:, ::1]", alpha="float64[:, ::1]",
                   beta="float64[:, ::1]", Tq="float64[:, ::1]", q0="float64[:, ::1]", counters="int64[:, :, ::1]",
                   reals="float64[:, :, ::1]", codes="int64[:, ::1]")

#: members per lock-step group of the lanes kernel (a compile-time constant: the lane loops are unrolled;
#: here, not in ``lanes.py``, so that grouping the members needs no numba)
LANES = 8

#: kind -> (module of the Python function, its name, argument types, return type, installed module)
KERNELS = {
    "lanes": ("lanes", "_adaptive_lanes_strided", LANES_TYPES, "none", "_lanes_aot"),
}
_EXPORT = "kernel"

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


def source_stamp() -> int:
    """A 60-bit hash of the kernel sources, the compiled signatures and this CPU: a compiled module is used
    only where it matches.  (Not this file as a whole: editing the rest of it does not change the compiled
    code.)"""
    h = hashlib.sha256()
    for name in _SOURCES:
        h.update((_HERE / name).read_bytes())
    h.update(repr([LANES] + [(k, v[3], sorted(v[2].items())) for k, v in sorted(KERNELS.items())]).encode())
    h.update(_cpu_id().encode())
    return int(h.hexdigest()[:15], 16)


def module_name(kind: str) -> str:
    """The name of ``kind``'s module built on first use, for these sources and CPU, numba and Python."""
    h = hashlib.sha256(f"{kind}|{source_stamp()}|{_numba_version()}|{sys.version}".encode())
    return f"ecocc_{kind}_" + h.hexdigest()[:16]


def python_function(kind: str):
    """The kernel ``kind`` as numba's JIT dispatcher (imports numba)."""
    import importlib
    mod, fn = KERNELS[kind][:2]
    return getattr(importlib.import_module(f"{__package__}.{mod}"), fn)


def signature(kind: str) -> str:
    """The kernel's numba signature, its parameters in order."""
    import inspect
    _, _, types, ret, _ = KERNELS[kind]
    names = inspect.signature(python_function(kind).py_func).parameters
    return f"{ret}(" + ", ".join(types[k] for k in names) + ")"


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


def compile_module(kind: str, name: str, out_dir: Path, *, quiet: bool = False, func=None, sig=None,
                   stamp=None) -> Path:
    """Compile the kernel ``kind`` into the extension module ``name`` (exporting ``kernel`` and ``stamp``) in
    ``out_dir``; returns the file.  Built in a temporary directory inside ``out_dir`` and renamed, so a
    concurrent reader sees the whole file or none.  ``func``, ``sig``, ``stamp``: another Python function
    (a generated kernel, :mod:`ecocc.dde.codegen`) with its signature and stamp."""
    from numba.core.errors import NumbaDeprecationWarning, NumbaPendingDeprecationWarning
    if func is None:
        func, sig, stamp = python_function(kind).py_func, signature(kind), source_stamp()
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


def _installed_kernel(kind: str):
    """The install-time module's kernel ``kind``, or None, and where it is or why it is not used."""
    spec = importlib.util.find_spec(f"{__package__}.{KERNELS[kind][4]}")
    if spec is None:
        return None, "no module built at install time"
    try:
        mod = importlib.import_module(spec.name)
        if mod.stamp() != source_stamp():
            return None, (f"the module built at install time ({spec.origin}) is for other kernel sources or "
                          "another CPU")
    except Exception as exc:  # a broken or foreign file: the cache or the JIT kernel does the same work
        return None, f"the module built at install time does not load: {type(exc).__name__}: {exc}"
    return getattr(mod, _EXPORT), spec.origin


# ---------------------------------------------------------------------------------------------------------
# the generated adaptive kernels of the registry models, shipped as source and compiled at install time
# ---------------------------------------------------------------------------------------------------------

#: where :func:`ecocc.dde.codegen.ship` writes the registry models' generated sources (and their index)
SHIPPED = _HERE / "shipped"
#: the network data ``D`` and work arrays ``Wk`` of a generated kernel (``ecocc.dde.codegen.kernel_data``)
_GEN_D = ("int64", "int64", "int64[::1]", "int64[::1]", "float64[::1]", "float64[::1]", "int64[::1]", "int64[::1]",
          "float64[::1]", "float64[::1]", "float64[::1]", "float64[::1]", "float64[:, ::1]", "float64[:, ::1]",
          "float64[:, ::1]", "float64[::1]")
_GEN_WK = ("float64[::1]", "float64[::1]", "float64[::1]", "int64[::1]", "int64[::1]")


def generated_signature():
    """The numba signature of a generated network kernel (:func:`ecocc.dde.integrator.adaptive_kernel` under
    a model's right-hand side), static so that the install-time build needs no model (a test checks it
    against ``numba.typeof`` of the arguments a run builds).

    Returns
    -------
    numba signature
        ``int64(<the types of engine.ADAPTIVE_ARGS>)``.
    """
    import numba
    from numba.core import types as nt

    def ty(text):
        return numba.typeof(0) if text == "int64" else eval(text, {}, vars(nt))  # noqa: S307  (fixed strings)

    from .engine import ADAPTIVE_ARGS
    spec = dict(ADAPTIVE_TYPES, hsrc="int64[::1]", iq="int64")
    args = []
    for k in ADAPTIVE_ARGS:
        if k == "D":
            args.append(nt.Tuple([ty(x) for x in _GEN_D]))
        elif k == "Wk":
            args.append(nt.Tuple([ty(x) for x in _GEN_WK]))
        else:
            args.append(ty(spec[k]))
    return nt.int64(*args)


def generated_stamp(gen_name: str) -> int:
    """The stamp of an install-time module of the generated kernel ``gen_name``: its name (a hash of its
    source) and this CPU.

    Parameters
    ----------
    gen_name : str
        The generated module's name (``ecocc_gen_<hash of its source>``).

    Returns
    -------
    int
        A 60-bit hash.
    """
    return int(hashlib.sha256(f"{gen_name}|{_cpu_id()}".encode()).hexdigest()[:15], 16)


def compile_shipped(src: Path, out_dir: Path, *, quiet: bool = False) -> Path:
    """Compile the shipped generated source ``src`` (``ecocc_gen_<hash>.py``) into the extension module
    ``<stem>_aot`` in ``out_dir`` (setup.py's build step).

    Parameters
    ----------
    src : Path
        The shipped generated source.
    out_dir : Path
        Where the extension module is written.
    quiet : bool
        No message on stderr.

    Returns
    -------
    Path
        The extension module's file.
    """
    name = src.stem
    spec = importlib.util.spec_from_file_location(name, src)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return compile_module(f"{name} adaptive", f"{name}_aot", out_dir, quiet=quiet, func=mod.adaptive_kernel.py_func,
                          sig=generated_signature(), stamp=generated_stamp(name))


def installed_generated(gen_name: str):
    """The install-time module of the generated kernel ``gen_name``.

    Parameters
    ----------
    gen_name : str
        The generated module's name.

    Returns
    -------
    tuple
        ``(kernel, path of the module)``, or ``(None, why it is not used)``.
    """
    if aot_mode() != "1":
        return None, f"ECOCC_AOT={aot_mode()}"
    try:
        spec = importlib.util.find_spec(f"{__package__}.shipped.{gen_name}_aot")
    except ImportError:
        spec = None
    if spec is None:
        return None, "no module built at install time"
    try:
        mod = importlib.import_module(spec.name)
        if mod.stamp() != generated_stamp(gen_name):
            return None, f"the module built at install time ({spec.origin}) is for another CPU"
    except Exception as exc:  # a broken or foreign file: the cache or the JIT kernel does the same work
        return None, f"the module built at install time does not load: {type(exc).__name__}: {exc}"
    return getattr(mod, _EXPORT), spec.origin


def _cached_kernel(kind: str):
    """This machine's module of ``kind`` from the kernel cache, built now if missing (needs numba)."""
    name = module_name(kind)
    path = _module_path(name)
    built = False
    if path is None:
        with _build_lock():  # a concurrent process (a sweep's workers) waits, then loads its module
            path = _module_path(name)
            if path is None:
                path = compile_module(kind, name, cache_dir())
                built = True
    return getattr(_load(path, name), _EXPORT), dict(compiled="aot", module=str(path), built_now=built)


AOT_MODES = ("1", "0", "cache")


def aot_mode() -> str:
    """``$ECOCC_AOT``: ``1`` (default) the installed module, else the cached one, else the JIT kernel; ``cache``
    skip the installed module; ``0`` always the JIT kernel."""
    from ..errors import InputError
    mode = os.environ.get("ECOCC_AOT", "1")
    if mode not in AOT_MODES:
        raise InputError("ECOCC_AOT", mode, f"one of {AOT_MODES} (environment variable)")
    return mode


def installed_usable(kind: str) -> bool:
    """Whether runs of ``kind`` take the module built at install time (they need no numba then)."""
    return aot_mode() == "1" and _installed_kernel(kind)[0] is not None


def kernel(kind: str):
    """The kernel ``kind`` (see :data:`KERNELS`): ahead-of-time compiled if possible (installed, else cached),
    else numba's JIT."""
    if kind in _state:
        return _state[kind][0]
    func, info = None, {}
    mode = aot_mode()
    if mode != "0":
        func, where = _installed_kernel(kind) if mode == "1" else (None, "ECOCC_AOT=cache")
        if func is not None:
            info = dict(compiled="aot", module=where, built_now=False, installed=True)
        else:
            try:
                func, info = _cached_kernel(kind)
                info["installed_unavailable"] = where
            except Exception as exc:  # no numba or pycc, no compiler, a failed build: the JIT kernel
                info = dict(compiled="jit", aot_unavailable=f"{where}; {type(exc).__name__}: {exc}")
    else:
        info = dict(compiled="jit", aot_unavailable="ECOCC_AOT=0")
    if func is None:
        func = python_function(kind)
    _state[kind] = (func, info)
    return func


def kernel_info(kind: str) -> dict:
    """How this process obtained the kernel ``kind`` (empty before its first run)."""
    return dict(_state.get(kind, (None, {}))[1])


def reset():
    """Forget the kernels chosen by this process (the tests switch between AOT and JIT)."""
    _state.clear()
    cg = sys.modules.get(f"{__package__}.codegen")
    if cg is not None:
        cg._kernels.clear()


def main():
    """``python -m ecocc.dde.aot``: find (or build into the cache) this machine's compiled kernels now -- the
    lock-step map kernel, the adaptive kernel of every registered model (numba's cache) and the shared
    integrator of user DDEs (:mod:`ecocc.dde.user`) -- e.g. after
    installing, so that the first real run does not pay for the compilation."""
    from ecocc.dde import aot  # the package's instance of this module (``python -m`` runs a second one)
    from ecocc.dde.codegen import warm
    for kind in KERNELS:
        aot.kernel(kind)
        info = aot.kernel_info(kind)
        print(f"{kind} kernel: {info.get('compiled')} ({info.get('module') or info.get('aot_unavailable')})")
    for name, (wall, path) in warm().items():
        print(f"adaptive kernel of {name}: ready in {wall:.1f} s ({path})")
    import time
    t0 = time.perf_counter()
    from ecocc.dde.user import _fp_integrator
    _fp_integrator()  # compiled on load (explicit signature), else loaded from numba's cache
    print(f"shared integrator of user DDEs (ecocc.dde.user): ready in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
