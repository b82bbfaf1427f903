"""The numba engine's Python side: checks, array preparation and results.

The compiled loops are generated or written in :mod:`ecocc.dde.codegen`
(+ :mod:`ecocc.dde.integrator`), :mod:`ecocc.dde.kernels` and
:mod:`ecocc.dde.lanes` (numba JIT, cached on disk); the lock-step kernel is
also compiled ahead of time, at install time (:mod:`ecocc.dde.aot`).  This
module imports none of them until a solver is called.

* :func:`solve_adaptive`: the Dormand--Prince 5(4) method of steps of
  :func:`ecocc.dde.adaptive.solve_dde`, one run, **every model**: the
  kernel is generated from the model's laws (:mod:`ecocc.dde.codegen`).
* :func:`solve_fixed_aecp`: classical RK4 on a uniform grid, batched
  (AECP/CLTCP).
* :func:`solve_adaptive_aecp_batch`: the adaptive method for many members
  (gains and RTT scalings) in lock-step groups of members with the same
  delays (:mod:`ecocc.dde.lanes`), for :func:`ecocc.batch.simulate_map`
  (AECP/CLTCP); returns arrays.

The first two return a :class:`~ecocc.dde.adaptive.DDESolution`, so
:meth:`Trajectory.from_solution` works unchanged.

Scope: networks without forward delays (``delay_split="feedback"``, the
papers' placement, and no explicit ``forward_delays_s``); anything else
raises :class:`~ecocc.errors.InputError` with ``engine="numba"`` and runs on
the NumPy solver with ``engine="auto"`` (:func:`resolve_engine`).  Not
supported inside the compiled loop: ``progress`` callbacks (called once at
the end), Ctrl-C (``interrupted`` status) and checkpoints.

numba is optional (the ``fast`` extra): without it :data:`HAVE_NUMBA` is
False, ``engine="auto"`` uses the NumPy solver (saying so once) and
``engine="numba"`` raises ``InputError``, except for the stability map if
its kernel was compiled at install time.
"""
from __future__ import annotations

import importlib.util
import math
import os
import time as _time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..errors import InputError
from .adaptive import _TABLEAUX, DDESolution, Status
from .aot import installed_usable

HAVE_NUMBA = importlib.util.find_spec("numba") is not None
#: models of the AECP-specific kernels (fixed-step RK4 batches, the stability map's lock-step groups); the
#: adaptive kernel is generated for every model (:mod:`ecocc.dde.codegen`)
SUPPORTED_MODELS = ("aecp", "cltcp")
ENGINES = ("auto", "numpy", "numba")
#: ``$ECOCC_ENGINE``: what ``engine="auto"`` (the default everywhere) means; "auto" unless set
ENGINE_ENV = "ECOCC_ENGINE"
_warned: set = set()


def _warn_once(key, text):
    """One line on stderr, once per process."""
    if key in _warned:
        return
    _warned.add(key)
    import sys
    sys.stderr.write(f"ecocc: {text}\n")


def default_engine() -> str:
    env = os.environ.get(ENGINE_ENV, "auto")
    if env not in ENGINES:
        raise InputError(ENGINE_ENV, env, f"one of {ENGINES} (environment variable)")
    return env


def resolve_engine(engine, model=None, network=None, *, kernel="adaptive") -> str:
    """The engine a run uses: ``"numba"`` or ``"numpy"``.

    ``engine="auto"`` (the default; ``$ECOCC_ENGINE`` overrides what it means) takes the compiled kernel
    where there is one for ``kernel`` (``"adaptive"``: every model; ``"fixed"`` and ``"lanes"``: AECP/CLTCP)
    and the network (no forward delays), else the NumPy solver.  Without numba it says once, in one line on
    stderr, that runs use the slower NumPy solver and how to get the compiled one.  ``"numba"`` and
    ``"numpy"`` are checked as asked (:func:`check_engine`).
    """
    if engine is None or engine == "auto":
        engine = default_engine()
    if engine != "auto":
        check_engine(engine, model, network, kernel=kernel)
        return engine
    why = _unsupported(model, network, kernel)
    if why is not None:
        return "numpy"
    if not HAVE_NUMBA and not (kernel == "lanes" and installed_usable("lanes")):
        _warn_once("numba", "numba is not installed, so simulations run on the NumPy solver (10 to 1000 times "
                            "slower); pip install 'ecocc[fast]' for the compiled engine")
        return "numpy"
    return "numba"


def codegen_gap(model):
    """Why the generated kernel cannot serve ``model``, or None.

    The generated right-hand side (:mod:`ecocc.dde.codegen`) follows every hook of ``NetworkSystem.rhs``:
    AQM drops taken out of the queue input and counted as lost (``link_drop_fraction``: Reno, HSTCP,
    Scalable TCP on RED) and the per-pair extras of the link signal it knows (``pair_extras`` in
    :data:`ecocc.dde.codegen.PAIR_EXTRAS`: XCP).  A model declaring another extra runs on the NumPy solver.

    Parameters
    ----------
    model : NetworkModel or None
        The model (None: nothing to check).

    Returns
    -------
    str or None
        Why the generated kernel cannot run the model (one sentence naming the hook), or None.
    """
    if model is None:
        return None
    from .codegen import PAIR_EXTRAS
    extras = tuple(getattr(model, "pair_extras", ()))
    unknown = [k for k in extras if k not in PAIR_EXTRAS]
    if unknown:
        return (f"model {model.name!r} needs per-pair extras {tuple(unknown)}, which the generated kernel lacks "
                f"(it computes {PAIR_EXTRAS})")
    if "n_active" in extras and not getattr(model, "signal_uses_arrival", False):
        return f"model {model.name!r} needs the pair extra 'n_active' without signal_uses_arrival"
    return None


def _unsupported(model, network, kernel):
    gap = codegen_gap(model)
    if gap is not None:
        return f"'numpy': {gap}"
    if kernel != "adaptive" and model is not None and getattr(model, "name", None) not in SUPPORTED_MODELS:
        return (f"'numpy' for model {getattr(model, 'name', model)!r}: the numba {kernel} kernel is for "
                f"{SUPPORTED_MODELS} only (the adaptive one serves every model)")
    if network is not None and np.any(network.arrays.pair_fwd_s > 0):
        return ("'numpy' for networks with forward delays (delay_split='propagation' or explicit "
                "forward_delays_s): the numba kernels put the whole RTT on the feedback path")
    return None


def check_engine(engine, model=None, network=None, *, kernel="adaptive"):
    """Validate ``engine`` (and, for ``"numba"``, the model and network).  ``kernel``: ``"adaptive"`` (every
    model), ``"fixed"`` or ``"lanes"`` (AECP/CLTCP; the lanes kernel is also compiled at install time and
    runs without numba, :mod:`ecocc.dde.aot`)."""
    if engine not in ENGINES:
        raise InputError("engine", engine, f"one of {ENGINES}")
    if engine in ("numpy", "auto"):
        return
    if not HAVE_NUMBA and not (kernel == "lanes" and installed_usable(kernel)):
        raise InputError("engine", engine, "'numpy' or 'auto': numba is not installed (pip install 'ecocc[fast]')")
    why = _unsupported(model, network, kernel)
    if why is not None:
        raise InputError("engine", engine, why)


class _Arrays:
    """Plain arrays of a (possibly batched) AECP NetworkSystem for the kernels."""

    def __init__(self, sysm, B):
        a = sysm.a
        lay = sysm.layout
        self.P, self.L = sysm.n_flows, sysm.n_links
        self.n = sysm.n
        assert lay["flow:x"].start == 0 and lay["link:r"].start == self.P and lay["queue"].start == self.P + self.L
        assert lay["sent"].start == self.P + 6 * self.L
        self.B = B
        self.fps = np.ascontiguousarray(a.flow_pair_start, dtype=np.int64)
        self.pl = np.ascontiguousarray(a.pair_link, dtype=np.int64)
        # links x flows, CSR: the same summation order as NetworkSystem.rhs's routing product
        self.lptr, self.lflows = a.flows_by_link()
        self.start = np.ascontiguousarray(a.start_s, dtype=float)
        self.stop = np.ascontiguousarray(a.stop_s, dtype=float)
        self.C = np.ascontiguousarray(sysm.C, dtype=float)
        self.buf = np.ascontiguousarray(a.buffer_pkts, dtype=float)
        self.ctimes = np.ascontiguousarray(sysm.cross_times, dtype=float)
        self.ctable = np.ascontiguousarray(sysm.cross_table, dtype=float)
        P_ = sysm.P

        def per_member(v):
            return np.ascontiguousarray(np.broadcast_to(np.asarray(v, dtype=float).reshape(-1), (B,)))
        self.alpha = per_member(P_.alpha_per_s)
        self.beta = per_member(P_.beta_per_s)
        self.Tq = per_member(P_.T_s)
        q0 = np.asarray(sysm.lst["q0"], dtype=float)
        self.q0 = np.ascontiguousarray(np.broadcast_to(q0.reshape(-1, self.L) if q0.ndim == 2 else q0, (B, self.L)))
        bwd = np.asarray(sysm.bwd, dtype=float)
        self.bwd = np.ascontiguousarray(np.broadcast_to(bwd, (B, self.pl.size)))


def _fixed_setup(ar, t0, t_end, step_s):
    """Grid, ring size and lookup plans exactly as :func:`solve_fixed` builds them."""
    from .fixed import _C, _Plan
    n_grid = max(1, int(math.ceil((t_end - t0) / step_s - 1e-9)))
    h = (t_end - t0) / n_grid
    dmax = float(ar.bwd.max()) if ar.bwd.size else 0.0
    M = int(math.ceil(dmax / h)) + 3
    B = ar.B
    bwd = ar.bwd if B > 1 else ar.bwd[0]
    plan = _Plan(np.arange(ar.pl.size), bwd, B, ar.n, h, M)  # comps only size the plan; offsets/weights use d
    offs, Ws, kneed = [], [], []
    for c in _C:
        off, Wc, kn = plan.stage[c]
        offs.append(np.broadcast_to(off, (B, ar.pl.size)))
        Ws.append(np.broadcast_to(Wc, (B, ar.pl.size, 4)))
        kneed.append(kn)
    return n_grid, h, dmax, M, np.ascontiguousarray(np.stack(offs)), np.ascontiguousarray(np.stack(Ws)), \
        np.asarray(kneed, dtype=np.int64)


def solve_fixed_aecp(sysm, t_end, step_s, *, y0=None, t_eval=None, progress=None) -> DDESolution:
    """Compiled :func:`ecocc.dde.fixed.solve_fixed` for an AECP ``NetworkSystem``.

    ``y0`` of shape ``(n,)`` (default: ``sysm.initial_state()``) or
    ``(B, n)`` for a batch (``sysm`` then carries batched parameters, delays
    and ``q0``, as :func:`ecocc.batch.simulate_batch` builds it).  Returns a
    ``DDESolution`` shaped as ``solve_fixed``'s.
    """
    check_engine("numba", sysm.model, sysm.net, kernel="fixed")
    wall0 = _time.perf_counter()
    t0 = 0.0
    t_end = float(t_end)
    if not t_end > t0:
        raise ValueError(f"t_end = {t_end!r} is not allowed: a time after t0 = {t0}")
    if not (step_s > 0 and math.isfinite(step_s)):
        raise ValueError(f"step_s = {step_s!r} is not allowed: a finite number > 0")
    y0 = sysm.initial_state() if y0 is None else np.asarray(y0, dtype=float)
    batched = y0.ndim == 2
    Y0 = np.ascontiguousarray(y0 if batched else y0[None, :])
    B = Y0.shape[0]
    ar = _Arrays(sysm, B)
    n_grid, h, dmax, M, off, W, kneed = _fixed_setup(ar, t0, t_end, step_s)
    prob = sysm.problem(y0=y0)
    tiny = max(1e-7 * h, 8 * np.finfo(float).eps * max(1.0, abs(t0), abs(t_end)))  # nudge_time is set
    jumps = prob.jumps[(prob.jumps >= t0) & (prob.jumps <= t_end)]
    if jumps.size:
        raise InputError("engine", "numba", "'numpy' for problems with state jumps")
    kinks = prob.kinks[(prob.kinks > t0) & (prob.kinks <= t_end)]
    special = np.zeros(n_grid + 2, dtype=np.bool_)
    ks = np.ceil((kinks - t0) / h - 1e-9).astype(np.int64)
    special[ks[(ks >= 0) & (ks <= n_grid + 1)]] = True
    if t_eval is None:
        t_eval_arr = t0 + h * np.arange(n_grid + 1)
        t_eval_arr[-1] = t_end
    else:
        t_eval_arr = np.asarray(t_eval, dtype=float)
        if t_eval_arr.size and (t_eval_arr.min() < t0 or t_eval_arr.max() > t_end + 1e-12 * max(1, abs(t_end))):
            raise ValueError("t_eval must lie in [t0, t_end]")
    out_y = np.empty((t_eval_arr.size, B, ar.n))
    t_failed = np.full(B, np.nan)
    n_clamp = np.zeros(B, dtype=np.int64)
    nfev = np.zeros(B, dtype=np.int64)
    k_reached = np.zeros(B, dtype=np.int64)
    from .kernels import _fixed_kernel
    _fixed_kernel(Y0, t0, h, n_grid, tiny, special, off, W, kneed, M, np.ascontiguousarray(t_eval_arr), out_y,
                  ar.P, ar.L, ar.fps, ar.pl, ar.lptr, ar.lflows, ar.start, ar.stop, ar.C, ar.buf, ar.ctimes,
                  ar.ctable, ar.alpha, ar.beta, ar.Tq, ar.q0, t_failed, n_clamp, nfev, k_reached)
    alive = ~np.isfinite(t_failed)
    status, message = Status.SUCCESS, (
        f"integration reached t_end (fixed step h = {h:.6g} s, classical RK4, numba kernel: order 4 in smooth "
        "regions, lower near queue clamps, kinks and jumps off the grid)")
    t_reached = t_end
    ty = t_eval_arr
    yy = out_y
    if not alive.all():
        status = Status.FAILED
        if batched:
            message = (f"{int((~alive).sum())} of {B} member(s) had a non-finite state (first at t = "
                       f"{np.nanmin(t_failed):.9g} s); they were frozen, the others completed")
        else:
            message = f"non-finite state at t = {t_failed[0]:.9g} s"
            t_reached = float(t_failed[0])
            keep = ty <= t_reached + 1e-12 * max(1.0, abs(t_reached))
            ty, yy = ty[keep], yy[keep]
    if progress is not None:
        progress(t_reached)
    if not batched:
        yy = yy[:, 0, :]
    settings = dict(step_s=h, step_requested_s=float(step_s), n_grid_steps=n_grid, delay_max_s=dmax,
                    ring_segments=M, batch_size=B if batched else None, engine="numba")
    if batched:
        settings["member_status"] = [Status.SUCCESS.value if a else Status.FAILED.value for a in alive]
        settings["member_t_failed_s"] = t_failed.tolist()
    return DDESolution(ty, yy, status, message, t_reached, int(k_reached.max()), 0, int(nfev.max()),
                       int(n_clamp.sum()), 0, h, h, _time.perf_counter() - wall0, "RK4-fixed", settings)


#: the generic adaptive kernel's arguments, in order (:func:`ecocc.dde.integrator.adaptive_kernel`)
ADAPTIVE_ARGS = ("y0", "t_end", "rtol", "atol_v", "max_step", "first_step", "max_steps", "bps", "t_eval", "out_y",
                 "Cc", "A", "Bw", "E", "Pd", "expo", "dmin", "keep_s", "dcomp", "hsrc", "iq", "L", "buf", "D", "Wk",
                 "counters", "reals")
#: the arguments of the AECP lock-step kernel (:func:`ecocc.dde.lanes._adaptive_lanes_strided`), in order
_AECP_ARGS = ("y0", "t_end", "rtol", "atol_v", "max_step", "first_step", "max_steps", "bps", "t_eval", "out_y",
              "Cc", "A", "Bw", "E", "Pd", "expo", "dmin", "keep_s", "dcomp", "P", "L", "fps", "pl", "bwd",
              "lptr", "lflows", "start", "stop", "C", "buf", "ctimes", "ctable", "alpha", "beta", "Tq", "q0",
              "counters", "reals")
_OUTPUTS = ("out_y", "counters", "reals")
LANES_ARGS = (("first", "stride") + _AECP_ARGS[:_AECP_ARGS.index("bps") + 1] + ("bps_ptr",)
              + _AECP_ARGS[_AECP_ARGS.index("bps") + 1:_AECP_ARGS.index("out_y") + 1]
              + ("n_int", "ocomp", "overlap") + _AECP_ARGS[_AECP_ARGS.index("out_y") + 1:] + ("codes",))


def _method_args(sysm, t_end, *, rtol, atol, t_eval, max_step, first_step, max_steps):
    """The model-independent arguments of the adaptive kernels (a dict): tableau, tolerances, breakpoints,
    delays, output grid.  Every array is a fresh, writable, C-contiguous float64 / int64 one: one signature
    for numba's cache (a read-only view and a writable array are two numba types)."""
    if t_eval is None:
        raise ValueError("t_eval is required by the compiled adaptive kernel")
    if not (rtol > 0):
        raise ValueError(f"rtol = {rtol!r} is not allowed: a number > 0")
    t0 = 0.0
    t_end = float(t_end)
    if not t_end > t0:
        raise ValueError(f"t_end = {t_end!r} is not allowed: a time after t0 = {t0}")
    prob = sysm.problem()
    if prob.jumps.size:
        raise InputError("engine", "numba", "'numpy' for problems with state jumps")
    n = sysm.n
    tab = _TABLEAUX["RK45"]
    Cc = np.asarray(tab["C"], dtype=float)
    n_st = Cc.size
    A = np.zeros((n_st, n_st))
    for i, row in enumerate(tab["A"]):
        A[i, :len(row)] = row
    delays = prob.positive_delays()
    dmin = float(delays.min()) if delays.size else math.inf
    dmax = float(delays.max()) if delays.size else 0.0
    t_eval_arr = np.asarray(t_eval, dtype=float)
    if t_eval_arr.size and (t_eval_arr.min() < t0 or t_eval_arr.max() > t_end + 1e-12 * max(1, abs(t_end))):
        raise ValueError("t_eval must lie in [t0, t_end]")
    # components read through a positive delay: their Hermite history is error-checked at mid-step (as the
    # NumPy solver does, so both take the same steps)
    dc = [lk.comps[np.asarray(lk.delays, dtype=float).reshape(-1) > 0] for lk in prob.lookups
          if np.ndim(lk.delays) == 1]
    dcomp = np.unique(np.concatenate(dc)) if dc else np.zeros(0, dtype=np.int64)
    args = dict(
        y0=prob.y0, t_end=t_end, rtol=float(rtol), atol_v=np.broadcast_to(np.asarray(atol, dtype=float), (n,)),
        max_step=float(max_step), first_step=float(first_step) if first_step else -1.0, max_steps=int(max_steps),
        bps=np.unique(np.concatenate([prob.breakpoints(t_end), [t_end]])), t_eval=t_eval_arr,
        out_y=np.empty((t_eval_arr.size, n)), Cc=Cc, A=A, Bw=tab["B"], E=tab["E"], Pd=tab["P"],
        expo=-1.0 / (tab["err_order"] + 1), dmin=dmin, keep_s=1.5 * dmax + 1e-9, dcomp=dcomp,
        counters=np.zeros(6, dtype=np.int64), reals=np.zeros(3))
    for k, v in args.items():
        if isinstance(v, np.ndarray) and k not in _OUTPUTS:
            args[k] = np.array(v, dtype=np.int64 if v.dtype.kind in "iub" else float, order="C")
    return args


def _adaptive_args(sysm, t_end, *, rtol, atol, t_eval, max_step, first_step, max_steps):
    """The AECP lock-step kernel's arguments for one AECP ``NetworkSystem`` (a dict keyed by ``_AECP_ARGS``)."""
    check_engine("numba", sysm.model, sysm.net, kernel="lanes")
    args = _method_args(sysm, t_end, rtol=rtol, atol=atol, t_eval=t_eval, max_step=max_step, first_step=first_step,
                        max_steps=max_steps)
    ar = _Arrays(sysm, 1)
    lk = sysm.lookups[sysm.lk_index["fb"]]
    args.update(
        dcomp=np.unique(lk.comps[np.asarray(lk.delays, dtype=float).reshape(-1) > 0]).astype(np.int64),
        P=ar.P, L=ar.L, fps=ar.fps, pl=ar.pl, bwd=ar.bwd[0], lptr=ar.lptr, lflows=ar.lflows, start=ar.start,
        stop=ar.stop, C=ar.C, buf=ar.buf, ctimes=ar.ctimes, ctable=ar.ctable, alpha=float(ar.alpha[0]),
        beta=float(ar.beta[0]), Tq=float(ar.Tq[0]), q0=ar.q0[0])
    for k, v in args.items():
        if isinstance(v, np.ndarray) and k not in _OUTPUTS:
            args[k] = np.array(v, dtype=np.int64 if v.dtype.kind in "iub" else float, order="C")
    return args


def _adaptive_status(code, counters, reals, max_steps):
    n_inacc, t_reached = int(counters[4]), float(reals[2])
    if code == 0:
        return Status.SUCCESS, "integration reached t_end"
    if code == 1:
        return Status.INACCURATE, (f"{n_inacc} step(s) accepted at the minimum step size with the error above "
                                   "tolerance; results may not meet rtol/atol")
    if code == 2:
        return Status.FAILED, f"non-finite state at t = {t_reached:.9g} s"
    return Status.FAILED, f"max_steps = {max_steps} reached at t = {t_reached:.9g} s"


def generic_args(sysm, t_end, *, rtol=1e-6, atol=1e-6, t_eval=None, max_step=math.inf, first_step=None,
                 max_steps=10_000_000):
    """``(module, args)``: the generated module of ``sysm``'s model (:mod:`ecocc.dde.codegen`) and its
    adaptive kernel's arguments (a dict keyed by :data:`ADAPTIVE_ARGS`)."""
    from . import codegen
    why = codegen.supported(sysm)
    if why is not None:
        raise InputError("engine", "numba", f"'numpy' for {why}")
    args = _method_args(sysm, t_end, rtol=rtol, atol=atol, t_eval=t_eval, max_step=max_step, first_step=first_step,
                        max_steps=max_steps)
    gen = codegen.generate(sysm)
    D, Wk = codegen.kernel_data(sysm, gen)
    qb = sysm.layout["queue"]
    args.update(hsrc=gen.hsrc(sysm.n_flows, sysm.n_links), iq=int(qb.start), L=int(sysm.n_links),
                buf=np.array(sysm.a.buffer_pkts, dtype=float, order="C"), D=D, Wk=Wk)
    return gen, args


def solve_adaptive(sysm, t_end, *, rtol=1e-6, atol=1e-6, t_eval=None, max_step=math.inf, first_step=None,
                   max_steps=10_000_000, progress=None) -> DDESolution:
    """Compiled :func:`ecocc.dde.adaptive.solve_dde` (method ``"RK45"``) for a ``NetworkSystem`` of any model.

    The kernel is generated from the model's laws (:mod:`ecocc.dde.codegen`) and compiled by numba on its
    first use on a machine (cached on disk).  ``t_eval`` is required (outputs only at those times).  Same
    error control, breakpoints, clamping and dense output as the NumPy solver.
    """
    wall0 = _time.perf_counter()
    gen, kw = generic_args(sysm, t_end, rtol=rtol, atol=atol, t_eval=t_eval, max_step=max_step,
                           first_step=first_step, max_steps=max_steps)
    from . import codegen
    fn, info = codegen.kernel(gen, kw)
    code = fn(*(kw[k] for k in ADAPTIVE_ARGS))
    counters, reals = kw["counters"], kw["reals"]
    n_steps, n_rej, nfev, n_clamp, n_inacc, n_out = (int(v) for v in counters)
    t_reached = float(reals[2])
    status, message = _adaptive_status(code, counters, reals, max_steps)
    if progress is not None:
        progress(t_reached)
    return DDESolution(kw["t_eval"][:n_out].copy(), kw["out_y"][:n_out], status, message, t_reached, n_steps, n_rej,
                       nfev, n_clamp, n_inacc, float(reals[0]) if n_steps else math.nan,
                       float(reals[1]) if n_steps else math.nan, _time.perf_counter() - wall0, "RK45",
                       dict(rtol=rtol, atol=np.asarray(atol).tolist(), max_step=max_step,
                            n_breakpoints=int(kw["bps"].size), delay_min_s=kw["dmin"],
                            delay_max_s=float(np.max(kw["D"][4], initial=0.0)), engine="numba",
                            kernel=gen.name, **info))


#: kernel arguments that differ between the members of a batch (per member: a row, or a segment of ``bps``)
_PER_MEMBER = ("y0", "bps", "out_y", "dmin", "keep_s", "bwd", "alpha", "beta", "Tq", "q0", "counters", "reals")


def _n_threads() -> int:
    """Threads for the lock-step groups: ``$NUMBA_NUM_THREADS`` if set (the knob numba's own parallel loops
    obey), else the cores this process may run on."""
    env = os.environ.get("NUMBA_NUM_THREADS")
    if env:
        if not env.isdigit() or int(env) < 1:
            raise InputError("NUMBA_NUM_THREADS", env, "an integer >= 1 (environment variable)")
        return int(env)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def solve_adaptive_aecp_batch(systems, member_system, alpha, beta, Tq, q0, t_end, *, rtol=1e-7, atol=None,
                              t_eval, max_step=math.inf, max_steps=10_000_000, components=None, dynamics_only=False,
                              overlap=False):
    """The adaptive kernel for ``B`` members, in lock-step groups (:mod:`ecocc.dde.lanes`, numba JIT).

    ``systems``: AECP ``NetworkSystem`` objects of one network that differ only in their delays (an RTT
    scaling); member ``b`` uses ``systems[member_system[b]]`` with the gains ``alpha[b]``, ``beta[b]``,
    ``Tq[b]`` and link targets ``q0[b]`` (shape ``(B, n_links)``).  Members of one system are advanced
    :data:`ecocc.dde.aot.LANES` at a time on shared steps, the groups in parallel over the cores.

    ``components``: the state components to output (default all); ``dynamics_only``: integrate (and
    control the error of) only the rates, rate factors and queues, not the counters that follow them in
    the state (lost, arrived, departed, queue area, sent), which feed nothing back; ``components`` must
    then be among the first ``n_flows + 2 n_links``.  ``overlap``: allow steps longer than the smallest
    delay, with delayed values inside a step corrected iteratively (see :func:`ecocc.dde.lanes._adaptive_lanes`);
    without it steps never exceed the smallest delay, as in :func:`solve_adaptive`.

    Returns ``(out_y, status, counters)``: outputs ``(B, len(t_eval), len(components))`` (NaN after a
    member failed), one :class:`Status` per member, the kernel's counters ``(B, 6)`` (steps, rejected,
    nfev, clamp events, inaccurate steps, outputs written; steps, rejections and nfev are its group's).
    """
    from .aot import LANES, kernel
    W = LANES
    ms = np.asarray(member_system, dtype=np.int64)
    per_sys = {i: _adaptive_args(systems[i], t_end, rtol=rtol, t_eval=t_eval, max_step=max_step, first_step=None,
                                 atol=systems[i].default_atol() if atol is None else atol, max_steps=max_steps)
               for i in np.unique(ms)}  # only the systems this call uses
    first = next(iter(per_sys.values()))
    for kw in per_sys.values():
        for k in _AECP_ARGS:
            if k not in _PER_MEMBER and isinstance(first[k], np.ndarray) and not np.array_equal(first[k], kw[k]):
                raise InputError("systems", k, "systems of one network that differ only in their delays")
    B = ms.size
    alpha, beta, Tq = (np.broadcast_to(np.asarray(v, dtype=float), (B,)) for v in (alpha, beta, Tq))
    q0 = np.asarray(q0, dtype=float).reshape(B, -1)
    # groups: the members of one system, W at a time; a short last group repeats its last member
    lanes_of = []
    for i in np.unique(ms):
        idx = np.flatnonzero(ms == i)
        for g0 in range(0, idx.size, W):
            members = idx[g0:g0 + W]
            lanes_of.append(np.concatenate([members, np.full(W - members.size, members[-1])]))
    grp = np.array(lanes_of, dtype=np.int64)  # (G, W) member of each lane
    G = grp.shape[0]
    sys_of = ms[grp[:, 0]]
    bl = [per_sys[i]["bps"] for i in sys_of]
    ptr = np.zeros(G + 1, dtype=np.int64)
    np.cumsum([b.size for b in bl], out=ptr[1:])

    def per_group(k):
        return np.ascontiguousarray(np.stack([per_sys[i][k] for i in sys_of]))

    ne, n = first["out_y"].shape
    n_int = first["P"] + 2 * first["L"] if dynamics_only else n
    ocomp = np.arange(n, dtype=np.int64) if components is None else np.asarray(components, dtype=np.int64)
    if ocomp.ndim != 1 or ocomp.size == 0 or ocomp.min() < 0 or ocomp.max() >= n_int:
        raise InputError("components", components, f"a non-empty list of state indices in [0, {n_int})"
                         + (" (dynamics_only: rates, rate factors and queues)" if dynamics_only else ""))
    no = ocomp.size
    col = dict(first)
    # flat lane layout [component * W + lane] (ecocc.dde.lanes)
    col.update(y0=np.ascontiguousarray(np.stack([np.repeat(per_sys[i]["y0"], W) for i in sys_of])),
               bps=np.concatenate(bl), out_y=np.empty((G, ne, no * W)), dmin=per_group("dmin"),
               keep_s=per_group("keep_s"), bwd=per_group("bwd"), alpha=np.ascontiguousarray(alpha[grp]),
               beta=np.ascontiguousarray(beta[grp]), Tq=np.ascontiguousarray(Tq[grp]),
               q0=np.ascontiguousarray(q0[grp].transpose(0, 2, 1).reshape(G, -1)),
               counters=np.zeros((G, W, 6), dtype=np.int64), reals=np.zeros((G, W, 3)))
    col.update(bps_ptr=ptr, n_int=n_int, ocomp=ocomp, overlap=bool(overlap),
               codes=np.zeros((G, W), dtype=np.int64))
    run = kernel("lanes")  # releases the GIL: one call per thread, each taking every n-th group
    args = [col[k] for k in LANES_ARGS[2:]]
    n = min(_n_threads(), G)
    with ThreadPoolExecutor(max_workers=n) as pool:
        for _ in pool.map(lambda first: run(first, n, *args), range(n)):  # re-raises a thread's exception
            pass
    codes = col["codes"]
    out = np.full((B, ne, no), np.nan)
    counters = np.zeros((B, 6), dtype=np.int64)
    reals = np.zeros((B, 3))
    code_of = np.zeros(B, dtype=np.int64)
    out_l = col["out_y"].reshape(G, ne, no, W)
    for g in range(G):  # lanes backwards: a member's own lane is read last, after any padding copy of it
        for w in range(W - 1, -1, -1):
            b = grp[g, w]
            counters[b], reals[b], code_of[b] = col["counters"][g, w], col["reals"][g, w], codes[g, w]
            n_out = counters[b, 5]
            out[b, :n_out] = out_l[g, :n_out, :, w]
    status = [_adaptive_status(int(c), counters[b], reals[b], max_steps)[0] for b, c in enumerate(code_of)]
    return out, status, counters
