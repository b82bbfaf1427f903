"""The shared integrator of user DDEs (:mod:`ecocc.dde.user`): one compiled Dormand--Prince kernel for every
DDE, its right-hand side an argument (a numba first-class function of the type ``RHS_SIG``).

Its source is :mod:`ecocc.dde.integrator`'s with ``_model_rhs`` made the first parameter and the signature
explicit (:func:`source`).  Two ways to have it compiled:

* at install time: ``setup.py`` builds it with ``numba.pycc`` into the extension module
  ``ecocc.dde.shipped._userint_aot`` (:func:`compile_installed`), which :func:`installed` loads (about
  0.01 s) -- the first user DDE on the machine then compiles only its own right-hand side;
* else on first use, by numba's JIT into numba's cache (:func:`ecocc.dde.user._fp_integrator`: about 17 s
  once per machine, then a cache load).

This module imports neither SymPy nor numba at import time (``setup.py`` runs it in the build environment).
"""
from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
#: the install-time module (``ecocc.dde.shipped.<MODULE>``)
MODULE = "_userint_aot"

#: numba types of the user right-hand side's arguments (the function-pointer kernel's contract): ``D`` =
#: (parameters, delays, t0), ``Wk`` = the work tuple whose 4th entry holds each lookup's history segment, then
#: the overlap arguments of the generated models' right-hand sides (a user DDE ignores them: no overlap)
TYPES_SRC = """from numba import types as _t
_D = _t.Tuple((_t.float64[::1], _t.float64[::1], _t.float64))
_W = _t.Tuple((_t.float64[::1], _t.float64[::1], _t.float64[::1], _t.int64[::1], _t.int64[::1]))
_A1, _A2 = _t.float64[::1], _t.float64[:, ::1]
RHS_SIG = _t.void(_t.float64, _t.float64, _A1, _t.boolean[::1], _t.boolean[::1], _A1, _D, _W, _t.float64, _A1, _A1,
                  _A2, _A2, _A2, _t.int64, _t.int64, _t.float64, _t.float64, _A2, _A1)
"""

#: numba types of the generic integrator's other arguments (as ``ecocc.dde.engine._method_args`` builds them:
#: fresh, writable, C-contiguous arrays)
ARG_TYPES = dict(
    y0="float64[::1]", t_end="float64", rtol="float64", atol_v="float64[::1]", logc="float64[::1]", max_step="float64",
    first_step="float64", max_steps="int64", bps="float64[::1]", t_eval="float64[::1]", out_y="float64[:, ::1]",
    overlap="boolean",
    Cc="float64[::1]", A="float64[:, ::1]", Bw="float64[::1]", E="float64[::1]", Pd="float64[:, ::1]",
    expo="float64", dmin="float64", keep_s="float64", max_hist_bytes="float64", dcomp="int64[::1]", hsrc="int64[::1]",
    iq="int64", L="int64",
    buf="float64[::1]", counters="int64[::1]", reals="float64[::1]", D="_D", Wk="_W")

_DEF = "@njit(cache=True, nogil=True)\ndef adaptive_kernel(y0,"
_JIT_DEF = "@njit(KERNEL_SIG, cache=True, nogil=True)\ndef adaptive_kernel(_model_rhs, y0,"


def _arg_names(template: str) -> list:
    """The integrator's parameters, in order, read from its definition in the template."""
    for node in ast.parse(template).body:
        if isinstance(node, ast.FunctionDef) and node.name == "adaptive_kernel":
            return [a.arg for a in node.args.args]
    raise RuntimeError("ecocc.dde.integrator: no adaptive_kernel")


def _numba_type(text: str) -> str:
    if text in ("_D", "_W"):
        return text
    if "[" in text:
        base, rest = text.split("[", 1)
        return f"_t.{base}[{rest}"
    return f"_t.{text}"


def source() -> str:
    """The shared integrator's module source (JIT form: ``@njit(KERNEL_SIG, cache=True)``).

    Returns
    -------
    str
        Python source: the template :mod:`ecocc.dde.integrator`, ``TYPES_SRC`` and ``KERNEL_SIG``.
    """
    template = (_HERE / "integrator.py").read_text()
    if _DEF not in template:
        raise RuntimeError("ecocc.dde.integrator: the kernel's definition line changed")
    names = _arg_names(template)
    missing = [k for k in names if k not in ARG_TYPES]
    if missing:
        raise RuntimeError(f"ecocc.dde.userint: no numba type for the integrator's arguments {missing}")
    sig = ", ".join(_numba_type(ARG_TYPES[k]) for k in names)
    types = TYPES_SRC + f"KERNEL_SIG = _t.int64(_t.FunctionType(RHS_SIG), {sig})\n"
    src = template.replace(_DEF, _JIT_DEF)
    # the overlap passes' right-hand side (a generated module's _model_rhs_cur): the argument here (a user DDE runs
    # without overlap, so those calls never run)
    if "_model_rhs_cur(" not in src:
        raise RuntimeError("ecocc.dde.integrator: the kernel no longer calls _model_rhs_cur")
    src = src.replace("_model_rhs_cur(", "_model_rhs(")
    # the right-hand side's type (RHS_SIG) takes C-contiguous history arrays: the row-major store of
    # kernels._history_new, not the strided views of the network kernels' _history_new_cm
    for a in ("_history_new", "_history_grow"):
        if f"= {a}_cm(" not in src:
            raise RuntimeError(f"ecocc.dde.integrator: the kernel no longer calls {a}_cm")
        src = src.replace(f"= {a}_cm(", f"= {a}(")
    stamp = hashlib.sha256(b"".join((_HERE / f).read_bytes() for f in ("kernels.py", "history.py"))).hexdigest()
    # the types are used by the decorator: define them before the kernel (after the template's imports)
    head, _, rest = src.partition("\n@njit")
    return (f'"""Generated by ecocc.dde.userint: the generic integrator, right-hand side as an argument."""\n'
            f"# helpers {stamp[:16]}\n" + head + "\n" + types + "\n@njit" + rest)


def name() -> str:
    """The generated module's name (a hash of :func:`source`).

    Returns
    -------
    str
        ``ecocc_fpint_<hash>``.
    """
    return "ecocc_fpint_" + hashlib.sha256(source().encode()).hexdigest()[:20]


def stamp() -> int:
    """What the install-time module must return from its ``stamp()`` to be used: a hash of the source, this
    CPU and numba's version (the right-hand side passed in is compiled by the numba of the run, so the
    module must come from the same numba).

    Returns
    -------
    int
    """
    from . import aot
    key = f"{name()}|{aot._cpu_id()}|{aot._numba_version()}"
    return int(hashlib.sha256(key.encode()).hexdigest()[:15], 16)


def compile_installed(out_dir: Path, *, quiet: bool = False) -> Path:
    """Build the shared integrator with ``numba.pycc`` into the extension module ``MODULE`` in ``out_dir``
    (``setup.py``'s build step; ``python setup.py build_ext --inplace`` in a checkout).

    Parameters
    ----------
    out_dir : Path
        Where the extension module is written.
    quiet : bool
        No message on stderr.

    Returns
    -------
    Path
        The extension module's file.
    """
    import importlib.machinery
    import tempfile

    from . import aot
    src = source()
    # the Python function for pycc: the same source without the JIT decorator (which would compile on load)
    plain = src.replace("@njit(KERNEL_SIG, cache=True, nogil=True)\ndef adaptive_kernel(", "def adaptive_kernel(")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name()}_plain.py"
        path.write_text(plain)
        loader = importlib.machinery.SourceFileLoader(path.stem, str(path))
        spec = importlib.util.spec_from_loader(path.stem, loader)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = mod
        loader.exec_module(mod)
        return aot.compile_module("shared user-DDE integrator", MODULE, Path(out_dir), func=mod.adaptive_kernel,
                                  sig=mod.KERNEL_SIG, stamp=stamp(), quiet=quiet)


def installed():
    """The install-time shared integrator, if built for this source, CPU and numba.

    Returns
    -------
    tuple
        ``(kernel, path of the module)``, or ``(None, why it is not used)``.
    """
    from . import aot
    if aot.aot_mode() != "1":
        return None, f"ECOCC_AOT={aot.aot_mode()}"
    try:
        spec = importlib.util.find_spec(f"{__package__}.shipped.{MODULE}")
    except ImportError:
        spec = None
    if spec is None:
        return None, "no module built at install time"
    try:
        mod = importlib.import_module(spec.name)
        if mod.stamp() != stamp():
            return None, f"the module built at install time ({spec.origin}) is for another source, CPU or numba"
    except Exception as exc:  # noqa: BLE001  (a broken or foreign file: the JIT integrator does the same work)
        return None, f"the module built at install time does not load: {type(exc).__name__}: {exc}"
    return getattr(mod, aot._EXPORT), spec.origin
