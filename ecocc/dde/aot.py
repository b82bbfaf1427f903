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

At install time, ``setup.py`` compiles the adaptive kernels of the registry models (default options): their
generated sources are shipped in the package (``ecocc/dde/shipped``, written by ``python -m ecocc.dde.codegen``,
so the build environment, numba only, needs no SymPy; :func:`compile_shipped`).  A kernel comes from, in
this order:

0. **The module built at install time** (adaptive kernels of the registry models): ``ecocc.dde.shipped.<name>_aot``,
   used when its stamp (its generated source's hash and this CPU, :func:`generated_stamp`) matches and
   ``ECOCC_AOT=1`` (the default); :func:`installed_generated`.
1. **A module built on first use**, if numba is installed: in ``$ECOCC_CACHE_DIR``, else
   ``$XDG_CACHE_HOME/ecocc``, else ``~/.cache/ecocc``.  The module name carries a hash of the generated
   source, the kernel kind, this CPU, numba's and Python's versions.  The first run without a module builds
   it (15 s to a few minutes on a busy machine); ``python -m ecocc.dde.aot`` does it now for every model.
   The module is written under a temporary name and renamed, so no process loads a partial file, and the
   build holds a lock named after the module, so concurrent processes (a sweep's workers) build it once
   and build different kernels at the same time.  Old
   modules (about 1 MB each) are not removed; delete the directory to clean up.
2. **numba's JIT** (cached on disk by numba) if that build fails; the run's ``settings`` / the map's
   ``attrs["kernel"]`` say why.

``ECOCC_AOT=0`` always uses the JIT kernels (the tests compare the two); ``ECOCC_AOT=cache`` skips the
installed modules.
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import platform
import sys
import warnings
from pathlib import Path

_HERE = Path(__file__).resolve().parent

#: members per lock-step group of the lanes kernel (a compile-time constant: the lane loops are unrolled;
#: here, not in ``lanes.py``, so that grouping the members needs no numba)
LANES = 8
#: the same for a model whose signal's kinks are breakpoints of the shared mesh (``KINKS`` of its generated module:
#: RED's thresholds, holds of a queue read linearly, XCP's switching functions of the load): every lane's kinks cut
#: the group's steps, so a narrower
#: group takes fewer steps (docs/notes/mapsfast.md); a divisor of ``LANES`` (a map's blocks of ``LANES`` points
#: then split into whole groups)
LANES_KINKS = 4
#: the lock-step group width of a registry model chosen by measurement (docs/notes/mapwidth.md: CPU time of maps
#: with and without, verdicts compared point by point on 100 x 100 maps): ``{model name: members per group}``, a
#: divisor of ``LANES`` (not listed: ``LANES``, or ``LANES_KINKS`` for a model with kinks).  The one place this
#: is decided (:func:`ecocc.dde.codegen._lanes_count`); it changes the generated text.  (A proportional-integral
#: step controller for XCP, measured -18 % CPU on 32 x 32 maps but not on the 100 x 100 one, was removed: it
#: made the lock-step XCP at RTT x 0.5 fail ``test_lanes_as_accurate_as_numpy``, 1.97e-6 against a bound of
#: 1.53e-6; with it went the table's only other setting, so a width is now the whole entry.)
LANES_MODEL: dict = {
    "hstcp": 1,  # CPU s, 32 x 32 maps: width 1 6.46, 2 6.98, 4 8.55; 100 x 100: 59 against 77
    "stcp": 2,  # CPU s, 32 x 32 maps: width 1 4.30, 2 4.21, 4 4.81; 100 x 100: 40.8 against 46.4
}

_EXPORT = "kernel"

def cache_dir() -> Path:
    """The kernel cache directory: ``$ECOCC_CACHE_DIR``, else ``$XDG_CACHE_HOME/ecocc``, else ``~/.cache/ecocc``.

    Returns
    -------
    pathlib.Path
        The directory (not created here).
    """
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
    import tempfile  # here: a run that loads a kernel writes nothing

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
def _build_lock(name: str):
    """An exclusive lock on ``cache_dir()/.build-<name>.lock``, one per module, so that processes building
    different kernels do not wait for each other (POSIX ``flock``; elsewhere no lock: concurrent builds then
    both finish and the atomic rename keeps one)."""
    d = cache_dir()
    d.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with open(d / f".build-{name}.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


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
#: the other arguments' types (as ``ecocc.dde.engine._method_args`` and ``generic_args`` build them: fresh,
#: writable, C-contiguous arrays)
_GEN_ARG_TYPES = dict(
    y0="float64[::1]", t_end="float64", rtol="float64", atol_v="float64[::1]", logc="float64[::1]", max_step="float64",
    first_step="float64", max_steps="int64", bps="float64[::1]", t_eval="float64[::1]", out_y="float64[:, ::1]",
    overlap="boolean",
    Cc="float64[::1]", A="float64[:, ::1]", Bw="float64[::1]", E="float64[::1]", Pd="float64[:, ::1]",
    expo="float64", dmin="float64", keep_s="float64", max_hist_bytes="float64", dcomp="int64[::1]", hsrc="int64[::1]",
    iq="int64", L="int64",
    buf="float64[::1]", counters="int64[::1]", reals="float64[::1]")


#: the extra fields of a mixed composite's ``D`` (:func:`ecocc.dde.codegen_mixed.kernel_data`): each member's flow
#: count, each flow's member, each flow's index among its member's flows, each link's earliest flow start, the
#: flows of each (link, member); the Chebyshev groups' slots (per link, flows by member, flows, a flow of each), each
#: flow's queueing-delay interval (centre, half-width), coefficients, cumulative terms, usable slots
_MIX_D = ("int64[::1]", "int64[::1]", "int64[::1]", "float64[::1]", "int64[::1]", "int64[::1]",
          "int64[::1]", "int64[::1]", "int64[::1]", "int64[::1]", "float64[::1]", "float64[::1]", "float64[:, ::1]",
          "int64[::1]", "int64[::1]")


def generated_signature(mixed: bool = False):
    """The numba signature of a generated network kernel (:func:`ecocc.dde.integrator.adaptive_kernel` under
    a model's right-hand side), static so that the install-time build needs no model (a test checks it
    against ``numba.typeof`` of the arguments a run builds).

    Parameters
    ----------
    mixed : bool, optional
        A mixed composite's kernel (:mod:`ecocc.dde.codegen_mixed`: fifteen more fields in ``D``).

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
    spec = _GEN_ARG_TYPES
    args = []
    for k in ADAPTIVE_ARGS:
        if k == "D":
            args.append(nt.Tuple([ty(x) for x in _GEN_D + (_MIX_D if mixed else ())]))
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
    """Compile the shipped generated source ``src`` (``ecocc_gen_<hash>.py``, or a mixed composite's
    ``ecocc_mix_<hash>.py``) into the extension module
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
                          sig=generated_signature(mixed=name.startswith("ecocc_mix_")), stamp=generated_stamp(name))


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


AOT_MODES = ("1", "0", "cache")


def aot_mode() -> str:
    """``$ECOCC_AOT``: ``1`` (default) or ``cache``: the module built into the kernel cache (on first use), else the
    JIT kernel; ``0``: always the JIT kernel.

    Returns
    -------
    str
        ``"1"``, ``"0"`` or ``"cache"``.

    Raises
    ------
    InputError
        For another value of the environment variable.
    """
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
    every registered model the generated kernels serve (and numba's cache of it), and the shared integrator of
    user DDEs (:mod:`ecocc.dde.user`; the install-time module when there is one, else numba's JIT) -- e.g.
    after installing, so
    that the first real run does not pay for the compilation.  The lock-step and fixed-step kernels are built
    on their first use."""
    from ecocc.dde.codegen import warm
    from ecocc.dde.engine import codegen_gap
    from ecocc.models import REGISTRY, get_model
    served = [n for n in REGISTRY if codegen_gap(get_model(n)) is None]
    for name, (wall, path) in warm(served).items():
        print(f"adaptive kernel of {name}: ready in {wall:.1f} s ({path})")
    import time
    t0 = time.perf_counter()
    from ecocc.dde.user import _shared_kernel
    # the install-time module when there is one; else numba's JIT (explicit signature) into its cache
    _, how = _shared_kernel()
    where = how.get("integrator_module") or "numba's cache"
    print(f"shared integrator of user DDEs (ecocc.dde.user): {how['compiled']}, ready in "
          f"{time.perf_counter() - t0:.1f} s ({where})")


if __name__ == "__main__":
    main()
