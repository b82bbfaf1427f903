"""The numba engine's Python side: checks, array preparation and results.

One compiled integrator per method, generic over models: :mod:`ecocc.dde.codegen` generates a model's
right-hand side from its laws and copies the method templates under it -- :mod:`ecocc.dde.integrator`
(adaptive Dormand--Prince 5(4) or Bogacki--Shampine 3(2): the tableau is an argument),
:mod:`ecocc.dde.lanes` (the same adaptive method for 8 members in lock-step) and :mod:`ecocc.dde.rk4`
(fixed-step classical RK4) -- into one module per model, compiled on first use on a machine (numba.pycc
into the kernel cache, else numba's JIT; cached on disk).  No model is transcribed by hand.  This module
imports none of them until a solver is called.

* :func:`solve_adaptive`: the method of steps of :func:`ecocc.dde.adaptive.solve_dde` (``"RK45"`` or
  ``"RK23"``), one run.
* :func:`solve_fixed`: classical RK4 on a uniform grid, one run or a batch of members in parallel.
* :func:`solve_adaptive_batch`: the adaptive method for many members (numeric parameters and RTT
  scalings) in lock-step groups of members with the same delays, for :func:`ecocc.batch.simulate_map`;
  returns arrays.

The first two return a :class:`~ecocc.dde.adaptive.DDESolution`, so :meth:`Trajectory.from_solution`
works unchanged.

Scope: every model the generated right-hand side serves (:func:`codegen_gap`).  The adaptive kernel also
follows forward delays (``delay_split="propagation"`` or explicit ``forward_delays_s``) and
``rtt_includes_queueing`` (state-dependent delays), from variants of the same generated code
(:func:`ecocc.dde.codegen.variant_flags`); the lock-step and fixed-step kernels do not yet.  Anything else
raises :class:`~ecocc.errors.InputError` with ``engine="numba"`` and runs on the NumPy solver with
``engine="auto"`` (:func:`resolve_engine`).  Not supported inside the compiled loop:
``progress`` callbacks (called once at the end), Ctrl-C (``interrupted`` status) and checkpoints.

numba is optional (the ``fast`` extra): without it :data:`HAVE_NUMBA` is False, ``engine="auto"`` uses the
NumPy solver (saying so once) and ``engine="numba"`` raises ``InputError``.
"""
from __future__ import annotations

import importlib.util
import math
import os
import time as _time

import numpy as np

from ..errors import InputError
from .adaptive import _TABLEAUX, DDESolution, Status, max_steps_message
from .options import DEFAULT_MAX_HISTORY_GIB
from .problem import sorted_unique

HAVE_NUMBA = importlib.util.find_spec("numba") is not None
#: the models :func:`ecocc.side_by_side.compare_protocols` runs compiled (its choice, unchanged); no kernel is
#: limited to them any more: every kernel (adaptive, lock-step, fixed-step) is generated for every model the
#: generated right-hand side serves (:func:`codegen_gap`, :mod:`ecocc.dde.codegen`)
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
    """What ``engine="auto"`` means: ``$ECOCC_ENGINE`` if set, else ``"auto"``.

    Returns
    -------
    str
        ``"auto"``, ``"numba"`` or ``"numpy"``.

    Raises
    ------
    InputError
        For another value of the environment variable.
    """
    env = os.environ.get(ENGINE_ENV, "auto")
    if env not in ENGINES:
        raise InputError(ENGINE_ENV, env, f"one of {ENGINES} (environment variable)")
    return env


def resolve_engine(engine, model=None, network=None, *, kernel="adaptive", mixed=False) -> str:
    """The engine a run uses: ``"numba"`` or ``"numpy"``.

    ``engine="auto"`` (the default; ``$ECOCC_ENGINE`` overrides what it means) takes the compiled kernel
    where there is one for ``kernel`` (``"adaptive"``, ``"lanes"``, ``"fixed"``: every model the generated kernels serve)
    and the network (forward delays: the adaptive kernel only), else the NumPy solver.  Without numba it says once, in one line on
    stderr, that runs use the slower NumPy solver and how to get the compiled one, except for the models whose
    kernels were built at install time (:data:`ecocc.dde.codegen.SHIP_MODELS`): ``"numba"`` then, and the
    caller checks the system with :func:`installed_kernel_for`; so for a mixed network (``mixed``), whose
    composite may have been built at install time (:data:`ecocc.dde.codegen_mixed.SHIP_MIXED`).  ``"numba"`` and
    ``"numpy"`` are checked as asked (:func:`check_engine`).

    Parameters
    ----------
    engine : {"auto", "numba", "numpy"} or None
        What the user asked for (None: ``"auto"``).
    model : NetworkModel or None, optional
        The model (None: not checked).
    network : Network or None, optional
        The network (forward delays need the NumPy solver).
    kernel : {"adaptive", "lanes", "fixed"}, optional
        Which compiled method would run.
    mixed : bool, optional
        The run is a network of several protocols (``model`` is then None).

    Returns
    -------
    str
        ``"numba"`` or ``"numpy"``.

    Raises
    ------
    InputError
        For an unknown engine, or ``"numba"`` where it cannot run.
    """
    if engine is None or engine == "auto":
        engine = default_engine()
    if engine != "auto":
        check_engine(engine, model, network, kernel=kernel)
        return engine
    why = _unsupported(model, network, kernel)
    if why is not None:
        return "numpy"
    if not HAVE_NUMBA:
        from .codegen import SHIP_MODELS
        if kernel == "adaptive" and (mixed or getattr(model, "name", None) in SHIP_MODELS):
            # a kernel built at install time may serve this run without numba: the caller checks it on the
            # system (installed_kernel_for) and calls warn_no_numba() if it cannot
            return "numba"
        warn_no_numba()
        return "numpy"
    return "numba"


def warn_no_numba():
    """Say once, on stderr, that runs use the NumPy solver because numba is not installed, and how to fix it."""
    from .codegen import SHIP_MODELS
    _warn_once("numba", "numba is not installed, so simulations run on the NumPy solver (10 to 1000 times "
                        f"slower) except runs of {', '.join(SHIP_MODELS)} on the kernels built at install time "
                        "and of TCP Symbiosis against drop-tail Reno on one network (a map runs them point by point; other "
                        "mixed-protocol networks take the NumPy solver); "
                        "pip install 'ecocc[fast]' for the compiled engine")


def installed_kernel_for(sysm) -> bool:
    """Whether the adaptive kernel of ``sysm`` can run without numba: its generated module was built at install
    time (a single model of :data:`ecocc.dde.codegen.SHIP_MODELS`, or a mixed network whose members are one of
    :data:`ecocc.dde.codegen_mixed.SHIP_MIXED`) and loads on this machine.

    Parameters
    ----------
    sysm : NetworkSystem or MixedSystem
        The model (or the composite of several protocols) on its network.

    Returns
    -------
    bool
        True if the install-time module serves it (always True when numba is installed: any kernel can be
        built then).
    """
    if HAVE_NUMBA:
        return True
    import json
    from . import aot, codegen
    try:
        if _is_mixed(sysm):
            from . import codegen_mixed
            if codegen_mixed.gap(sysm) is not None:
                return False
            key = codegen_mixed._index_key(sysm)
            key = key and f"mixed-{key}"
        else:
            if codegen.supported(sysm) is not None:
                return False
            key = codegen._laws_key(sysm)
        idx = codegen._shipped() / "index" / f"{key}.json"
        if key is None or not idx.is_file():
            return False
        fn, _ = aot.installed_generated(json.loads(idx.read_text())["name"])
    except Exception:  # a missing or foreign file: the NumPy solver does the same work
        return False
    return fn is not None


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
    if kernel != "adaptive" and network is not None and np.any(network.arrays.pair_fwd_s > 0):
        # the adaptive kernel serves them (codegen.variant_flags); the lock-step and fixed-step ones do not yet
        return (f"'numpy' for networks with forward delays (delay_split='propagation' or explicit "
                f"forward_delays_s) with the {kernel!r} kernel: only the adaptive compiled kernel "
                "(solver='adaptive', one run) follows them")
    return None


def _variant_gap(sysm, kernel):
    """Why the compiled ``kernel`` (``"lanes"`` or ``"fixed"``) cannot run ``sysm``'s variant, or None: only the
    adaptive kernel follows ``rtt_includes_queueing`` and forward delays (:func:`ecocc.dde.codegen.variant_flags`);
    the lock-step kernel does not read delayed loads at the sending time, which matters only where the model's
    delayed load reads the queueing delay (:func:`ecocc.dde.codegen.sent_differs`; elsewhere ``load_rtt="sent"``
    is the same equations as "current", which it runs)."""
    from .codegen import sent_differs, variant_flags
    sdd, fwd, sent = variant_flags(sysm)
    if sent and kernel == "lanes" and sent_differs(sysm):
        return (f"load_rtt='sent' with the 'lanes' kernel: the lock-step map kernel reads delayed rates with the "
                f"current queueing delay only, and {sysm.model.name}'s delayed load reads the queueing delay")
    if sdd:
        return (f"rtt_includes_queueing=True with the {kernel!r} kernel: only the adaptive compiled kernel has "
                "state-dependent delays")
    if fwd:
        return f"forward delays with the {kernel!r} kernel: only the adaptive compiled kernel follows them"
    return None


def check_engine(engine, model=None, network=None, *, kernel="adaptive"):
    """Validate ``engine`` (and, for ``"numba"``, the model and network).

    Parameters
    ----------
    engine : str
        ``"auto"``, ``"numba"`` or ``"numpy"``.
    model : NetworkModel or None, optional
        The model (None: not checked).
    network : Network or None, optional
        The network (None: not checked).
    kernel : {"adaptive", "lanes", "fixed"}, optional
        Which compiled method (every model the generated kernels serve, :func:`codegen_gap`).

    Raises
    ------
    InputError
        For an unknown engine, or ``"numba"`` where numba is missing or the kernel cannot serve the model
        or the network.
    """
    if engine not in ENGINES:
        raise InputError("engine", engine, f"one of {ENGINES}")
    if engine in ("numpy", "auto"):
        return
    if not HAVE_NUMBA:
        from .codegen import SHIP_MODELS
        if not (kernel == "adaptive" and getattr(model, "name", None) in SHIP_MODELS):  # else: installed_kernel_for
            raise InputError("engine", engine, "'numpy' or 'auto': numba is not installed (pip install 'ecocc[fast]')")
    why = _unsupported(model, network, kernel)
    if why is not None:
        raise InputError("engine", engine, why)


#: the arguments of the generated fixed-step kernel (:func:`ecocc.dde.rk4.fixed_kernel_strided`), in order
FIXED_ARGS = ("first", "stride", "Y0", "t0", "h", "n_grid", "tiny", "special", "t_eval", "out_y", "keep_s", "hsrc",
              "iq", "L", "buf", "Dg", "FST", "LST", "par", "bwd", "rtt", "res")
#: fields of the generated kernels' ``D`` that are per system or per member (delays, RTTs, static fields,
#: parameters); the others (``Dg``) are shared by the members of a batch
_D_MEMBER = (4, 5, 13, 14, 15)
_D_SHARED = (0, 1, 2, 3, 6, 7, 8, 9, 10, 11, 12)


def _shared_data(systems, gen):
    """The generated kernel's ``D`` of every system, checked to differ only in the per-member fields."""
    from . import codegen
    data = [codegen.kernel_data(s, gen)[0] for s in systems]
    for i, d in enumerate(data):
        if codegen.generate(systems[i]) is not gen:
            raise InputError("systems", i, "systems of one model with the same options")
        for k in _D_SHARED:
            v, v0 = d[k], data[0][k]
            if not (np.array_equal(v, v0) if isinstance(v, np.ndarray) else v == v0):
                raise InputError("systems", i, "systems of one network that differ only in their delays and "
                                 "numeric parameters")
    return data


def solve_fixed(systems, t_end, step_s, *, t_eval=None, progress=None) -> DDESolution:
    """Compiled :func:`ecocc.dde.fixed.solve_fixed` (classical RK4 on a uniform grid) for any model.

    The kernel is generated from the model's laws (:mod:`ecocc.dde.codegen` around :mod:`ecocc.dde.rk4`) and
    agrees with the NumPy solver to round-off (same grid, stages, masks, clamps and Hermite past).

    Parameters
    ----------
    systems : NetworkSystem or list of NetworkSystem
        One run, or a batch: one system per member (one model on one network, differing only in delays and
        numeric parameters, as :func:`ecocc.batch.simulate_batch` builds them), integrated from their
        initial states, the members in parallel over the cores.
    t_end : float
        End time, seconds.
    step_s : float
        Requested step, seconds (shrunk so that the grid ends at ``t_end``; ``settings["step_s"]``).
    t_eval : array of float, optional
        Output times, seconds (default: the grid).
    progress : callable, optional
        Called once with the time reached, seconds.

    Returns
    -------
    DDESolution
        Shaped as ``solve_fixed``'s: ``y`` ``(len(t_eval), n)``, or ``(len(t_eval), B, n)`` for a batch, with
        ``settings["member_status"]`` and ``settings["member_t_failed_s"]`` (s).
    """
    from . import codegen
    batched = isinstance(systems, (list, tuple))
    members = list(systems) if batched else [systems]
    if not members:
        raise InputError("systems", systems, "at least one NetworkSystem")
    if any(_is_mixed(sm) for sm in members):  # a composite of several protocols (ecocc.dde.codegen_mixed)
        if batched:
            raise InputError("systems", "a batch of mixed-protocol systems",
                             "one MixedSystem per call (batches of a composite run one by one)")
        from . import codegen_mixed
        return codegen_mixed.solve_fixed(systems, t_end, step_s, t_eval=t_eval, progress=progress)
    for sm in members:
        check_engine("numba", sm.model, sm.net, kernel="fixed")
        why = codegen.supported(sm) or _variant_gap(sm, "fixed")
        if why is not None:
            raise InputError("engine", "numba", f"'numpy' for {why}")
    wall0 = _time.perf_counter()
    t0 = 0.0
    t_end = float(t_end)
    if not t_end > t0:
        raise ValueError(f"t_end = {t_end!r} is not allowed: a time after t0 = {t0}")
    if not (step_s > 0 and math.isfinite(step_s)):
        raise ValueError(f"step_s = {step_s!r} is not allowed: a finite number > 0")
    s0 = members[0]
    prob = s0.problem()
    jumps = prob.jumps[(prob.jumps >= t0) & (prob.jumps <= t_end)]
    if jumps.size:
        raise InputError("engine", "numba", "'numpy' for problems with state jumps")
    n_grid = max(1, int(math.ceil((t_end - t0) / step_s - 1e-9)))
    h = (t_end - t0) / n_grid
    gen = codegen.generate(s0)
    data = _shared_data(members, gen)
    B = len(members)
    dmax = max(float(np.max(d[4], initial=0.0)) for d in data)
    M = int(math.ceil(dmax / h)) + 3  # solve_fixed's ring (reported); the history keeps the same past
    tiny = max(1e-7 * h, 8 * np.finfo(float).eps * max(1.0, abs(t0), abs(t_end)))  # nudge_time is set
    kinks = prob.kinks[(prob.kinks > t0) & (prob.kinks <= t_end)]
    special = np.zeros(n_grid + 2, dtype=np.bool_)
    ks = np.ceil((kinks - t0) / h - 1e-9).astype(np.int64)
    special[ks[(ks >= 0) & (ks <= n_grid + 1)]] = True
    if t_eval is None:
        t_eval_arr = t0 + h * np.arange(n_grid + 1)
        t_eval_arr[-1] = t_end
    else:
        t_eval_arr = np.array(t_eval, dtype=float)
        if t_eval_arr.size and (t_eval_arr.min() < t0 or t_eval_arr.max() > t_end + 1e-12 * max(1, abs(t_end))):
            raise ValueError("t_eval must lie in [t0, t_end]")
    n = s0.n
    qb = s0.layout["queue"]

    def stack(k):
        return np.ascontiguousarray(np.stack([d[k] for d in data]))
    args = dict(
        Y0=np.ascontiguousarray(np.stack([sm.initial_state() for sm in members]), dtype=float), t0=t0, h=float(h),
        n_grid=int(n_grid), tiny=float(tiny), special=special, t_eval=np.ascontiguousarray(t_eval_arr),
        out_y=np.empty((B, t_eval_arr.size, n)), keep_s=1.5 * dmax + 3 * h, hsrc=gen.hsrc(s0.n_flows, s0.n_links),
        iq=int(qb.start), L=int(s0.n_links), buf=np.array(s0.a.buffer_pkts, dtype=float, order="C"),
        Dg=tuple(data[0][k] for k in _D_SHARED), FST=stack(13), LST=stack(14), par=stack(15), bwd=stack(4),
        rtt=stack(5), res=np.zeros((B, 4)), first=0, stride=1)
    run, info = codegen.kernel(gen, args, "fixed")
    _run_groups(run, B, [args[k] for k in FIXED_ARGS[2:]])
    res = args["res"]
    t_failed = res[:, 0]
    alive = ~np.isfinite(t_failed)
    status, message = Status.SUCCESS, (
        f"integration reached t_end (fixed step h = {h:.6g} s, classical RK4, numba kernel: order 4 in smooth "
        "regions, lower near queue clamps, kinks and jumps off the grid)")
    t_reached = t_end
    ty = t_eval_arr
    yy = np.ascontiguousarray(args["out_y"].transpose(1, 0, 2))  # (time, member, n)
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
                    ring_segments=M, batch_size=B if batched else None, engine="numba", kernel=gen.name, **info)
    if batched:
        settings["member_status"] = [Status.SUCCESS.value if a else Status.FAILED.value for a in alive]
        settings["member_t_failed_s"] = t_failed.tolist()
    return DDESolution(ty, yy, status, message, t_reached, int(res[:, 3].max()), 0, int(res[:, 2].max()),
                       int(res[:, 1].sum()), 0, h, h, _time.perf_counter() - wall0, "RK4-fixed", settings)


#: the generic adaptive kernel's arguments, in order (:func:`ecocc.dde.integrator.adaptive_kernel`)
ADAPTIVE_ARGS = ("y0", "t_end", "rtol", "atol_v", "logc", "max_step", "first_step", "max_steps", "bps", "t_eval", "out_y",
                 "overlap", "Cc", "A", "Bw", "E", "Pd", "expo", "dmin", "keep_s", "max_hist_bytes", "dcomp", "hsrc", "iq", "L",
                 "buf", "D", "Wk", "counters", "reals")
#: the arguments of the generated lock-step kernel (:func:`ecocc.dde.lanes.lanes_kernel_strided`), in order
LANES_ARGS = ("first", "stride", "y0", "t_end", "rtol", "atol_v", "logc", "max_step", "first_step", "max_steps", "bps",
              "bps_ptr", "t_eval", "out_y", "orow", "n_int", "ocomp", "overlap", "kinks", "Cc", "A", "Bw", "E", "Pd", "expo",
              "dmin", "keep_s", "max_hist_bytes", "dcomp", "hsrc", "iq", "L", "buf", "Dg", "FST", "LST", "par", "bwd", "rtt",
              "counters", "reals", "codes")
#: length of the adaptive kernels' ``reals`` output: smallest and largest step, time reached, and (status 5)
#: the step size, the largest ``|y|``, the history's bytes and its nodes
N_REALS = 7
#: the kernels' status code of a run stopped by its history memory bound (``max_hist_bytes``)
CODE_HISTORY_LIMIT = 5
_OUTPUTS = ("out_y", "counters", "reals")
#: the adaptive methods of the compiled kernels (the NumPy solver's tableaux): Dormand-Prince 5(4) and
#: Bogacki-Shampine 3(2); one generic integrator serves both (the tableau is an argument)
METHODS = tuple(_TABLEAUX)


#: the breakpoint depth (:meth:`ecocc.dde.problem.DDEProblem.breakpoints`) of the lock-step batch with ``kinks`` for
#: the registry models where a second level was measured to save work (else the problem's own, 1).  The start-up
#: jumps' images through a second delay are where the load a flow reads kinks (another flow's feedback has just
#: started); all lanes of a group run one network, so they share these times.  XCP's 100 x 100 map: 5,298
#: right-hand sides per group of 4 against 5,726 (-7.5 %).  Not for the others: their maps changed by -0.7 % to
#: +0.7 %, and with it HSTCP's lock-step accuracy check at RTT x 0.5 failed (docs/notes/mapswitch.md)
LANES_KINKS_DEPTH = {"xcp": 2}


def _method_args(sysm, t_end, *, rtol, atol, t_eval, max_step, first_step, max_steps, method="RK45",
                 max_history_gib=DEFAULT_MAX_HISTORY_GIB, overlap=False, breakpoint_depth=None):
    """The model-independent arguments of the adaptive kernels (a dict): tableau, tolerances, breakpoints
    (propagated to ``breakpoint_depth``; None: the problem's own), delays, output grid, the history's memory bound
    (``max_history_gib``, validated here), the overlap mode
    (``overlap``, validated here: steps longer than the smallest delay).  Every array is a
    fresh, writable, C-contiguous float64 / int64 one: one signature
    for numba's cache (a read-only view and a writable array are two numba types)."""
    if t_eval is None:
        raise ValueError("t_eval is required by the compiled adaptive kernel")
    from . import options as opt
    rtol = opt.rtol(rtol)
    max_hist_bytes = opt.history_bytes(opt.max_history_gib(max_history_gib))
    overlap = opt.flag("overlap", overlap)
    t0 = 0.0
    t_end = float(t_end)
    if not t_end > t0:
        raise ValueError(f"t_end = {t_end!r} is not allowed: a time after t0 = {t0}")
    prob = sysm.problem()
    if prob.jumps.size:
        raise InputError("engine", "numba", "'numpy' for problems with state jumps")
    n = sysm.n
    # validated (a None or NaN atol turned every error test into "pass": error control off, status success)
    atol_v = opt.atol(atol, n)
    if method not in _TABLEAUX:
        raise InputError("method", method, f"one of {tuple(_TABLEAUX)}")
    tab = _TABLEAUX[method]
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
    # components read through a positive delay (and used by the laws: DDEProblem.delayed_read): their Hermite
    # history is error-checked at mid-step (as the NumPy solver does, so both take the same steps)
    dcomp = prob.delayed_checked()
    args = dict(
        y0=prob.y0, t_end=t_end, rtol=rtol, atol_v=atol_v,
        logc=prob.log_mask().astype(float),  # 1: a logarithm, its error scale atol + rtol (DDEProblem.log_components)
        max_step=float(max_step), first_step=float(first_step) if first_step else -1.0, max_steps=int(max_steps),
        bps=sorted_unique(np.concatenate([prob.breakpoints(t_end, depth=breakpoint_depth), [t_end]])),
        t_eval=t_eval_arr,
        out_y=np.empty((t_eval_arr.size, n)), overlap=overlap, Cc=Cc, A=A, Bw=tab["B"], E=tab["E"], Pd=tab["P"],
        expo=-1.0 / (tab["err_order"] + 1), dmin=dmin, keep_s=1.5 * dmax + 1e-9, max_hist_bytes=max_hist_bytes,
        dcomp=dcomp, counters=np.zeros(6, dtype=np.int64), reals=np.zeros(N_REALS))
    for k, v in args.items():
        if isinstance(v, np.ndarray) and k not in _OUTPUTS:
            args[k] = np.array(v, dtype=np.int64 if v.dtype.kind in "iub" else float, order="C")
    return args


def _is_mixed(sysm) -> bool:
    """Whether ``sysm`` is a composite of several protocols (:class:`ecocc.mixed.MixedSystem`)."""
    from ..mixed import MixedSystem
    return isinstance(sysm, MixedSystem)


def _adaptive_status(code, counters, reals, max_steps, max_hist_bytes=math.inf, keep_s=math.inf, unit=" s",
                     dmin=math.inf, t0=0.0):
    """``(Status, message)`` of an adaptive kernel's status code, counters and reals (code 5: the history bound
    ``max_hist_bytes``, whose window was ``keep_s``; ``unit``: the time unit in the message; ``dmin``: the smallest
    delay, for the mean step of a run stopped by ``max_steps``; ``t0``: the caller's start time, the kernel's time
    starting at 0, so that the messages give the caller's times)."""
    t_reached = float(reals[2]) + t0
    if code == 0:
        return Status.SUCCESS, "integration reached t_end"
    if code == 2:
        return Status.FAILED, f"non-finite state at t = {t_reached:.9g}{unit}"
    if code == 4:  # the adaptive kernel and the lock-step lanes alike
        return Status.FAILED, (f"step size underflow at t = {t_reached:.9g}{unit}: the error estimate stays above the "
                               "tolerance even at the smallest step")
    if code == CODE_HISTORY_LIMIT:
        from .history import limit_message
        return Status.FAILED, limit_message(t_reached, int(reals[6]), float(reals[5]), max_hist_bytes, float(reals[3]),
                                            float(reals[1]), float(reals[4]), keep_s, unit=unit)
    return Status.FAILED, max_steps_message(max_steps, t_reached, t0, int(counters[0]), dmin, unit=unit)


def generic_args(sysm, t_end, *, rtol=1e-6, atol=1e-6, t_eval=None, max_step=math.inf, first_step=None,
                 max_steps=10_000_000, method="RK45", max_history_gib=DEFAULT_MAX_HISTORY_GIB, overlap=False):
    """``(module, args)``: the generated module of ``sysm``'s model (:mod:`ecocc.dde.codegen`) and its
    adaptive kernel's arguments (a dict keyed by :data:`ADAPTIVE_ARGS`).

    Parameters
    ----------
    sysm : NetworkSystem
        The model on its network.
    t_end : float
        End time, seconds.
    rtol : float, optional
        Relative tolerance.
    atol : float or array_like, optional
        Absolute tolerance (packets for queues and counters).
    t_eval : array_like or None, optional
        Output times, seconds.
    max_step, first_step : float, optional
        Largest and first step, seconds.
    max_steps : int, optional
        Step budget.
    method : {"RK45", "RK23"}, optional
        The Runge-Kutta pair.
    max_history_gib : float, optional
        Memory bound of the kernel's stored history, GiB (as :func:`ecocc.dde.adaptive.solve_dde`).
    overlap : bool, optional
        Steps may be longer than the smallest delay (:func:`solve_adaptive`).

    Returns
    -------
    tuple
        ``(Generated, dict of the kernel's arguments)``.

    Raises
    ------
    InputError
        For a system the generated kernels do not serve (:func:`ecocc.dde.codegen.supported`).
    """
    from . import codegen
    if _is_mixed(sysm):  # a composite of several protocols: its own generated module (ecocc.dde.codegen_mixed)
        from . import codegen_mixed
        return codegen_mixed.generic_args(sysm, t_end, rtol=rtol, atol=atol, t_eval=t_eval, max_step=max_step,
                                          first_step=first_step, max_steps=max_steps, method=method,
                                          max_history_gib=max_history_gib, overlap=overlap)
    why = codegen.supported(sysm)
    if why is not None:
        raise InputError("engine", "numba", f"'numpy' for {why}")
    args = _method_args(sysm, t_end, rtol=rtol, atol=atol, t_eval=t_eval, max_step=max_step, first_step=first_step,
                        max_steps=max_steps, method=method, max_history_gib=max_history_gib, overlap=overlap)
    gen = codegen.generate(sysm)
    D, Wk = codegen.kernel_data(sysm, gen)
    if getattr(sysm, "rtt_includes_queueing", False):
        args["keep_s"] = sdd_keep_s(sysm)
    qb = sysm.layout["queue"]
    args.update(hsrc=gen.hsrc(sysm.n_flows, sysm.n_links), iq=int(qb.start), L=int(sysm.n_links),
                buf=np.array(sysm.a.buffer_pkts, dtype=float, order="C"), D=D, Wk=Wk)
    return gen, args


def sdd_keep_s(sysm) -> float:
    """How far back a run with ``rtt_includes_queueing`` reads its past: 1.5 x (the largest constant delay plus
    the largest queueing delay), as :func:`ecocc.dde.adaptive.solve_dde` keeps it.

    Parameters
    ----------
    sysm : NetworkSystem or MixedSystem
        The system (``rtt_includes_queueing`` set).

    Returns
    -------
    float
        Seconds; ``inf`` where a route has an unbounded buffer (all of the past kept).
    """
    delays = sysm.problem().positive_delays()
    dmax = float(delays.max()) if delays.size else 0.0
    return 1.5 * (dmax + sysm.queueing_delay_bound_s()) + 1e-9


def solve_adaptive(sysm, t_end, *, rtol=1e-6, atol=1e-6, t_eval=None, max_step=math.inf, first_step=None,
                   max_steps=10_000_000, progress=None, method="RK45",
                   max_history_gib=DEFAULT_MAX_HISTORY_GIB, overlap=False) -> DDESolution:
    """Compiled :func:`ecocc.dde.adaptive.solve_dde` for a ``NetworkSystem`` of any model.

    Parameters
    ----------
    sysm : NetworkSystem
    t_end : float
        End time, seconds.
    rtol, atol : float, float or array
        Tolerances (``atol`` per component: log-states in log units, queues and counters in packets).
    t_eval : array of float
        Output times, seconds (required).
    max_step, first_step : float
        Largest step and first step, seconds (``first_step=None``: chosen as the NumPy solver does).
    max_steps : int
    progress : callable, optional
        Called once with the time reached, seconds.
    method : {"RK45", "RK23"}
        Dormand--Prince 5(4) (default) or Bogacki--Shampine 3(2), the NumPy solver's tableaux, run by the same
        generic integrator (:mod:`ecocc.dde.integrator`).
    max_history_gib : float
        Memory bound of the stored history, GiB (> 0, ``inf`` for none): a run whose past would need more stops
        with status ``failed`` and a message saying why (as :func:`ecocc.dde.adaptive.solve_dde`).
    overlap : bool
        Steps may be longer than the smallest delay (default False: every step is capped by it, the NumPy
        solver's method of steps).  A delayed value inside the step being taken is then predicted by
        extrapolating the last history segment and corrected with the step's own continuous extension, pass
        after pass, until two passes' end values differ by at most ``OVERLAP_TOL`` of the tolerance (at most
        ``OVERLAP_PASSES`` passes, else the step is halved): the lock-step kernel's overlap mode
        (:mod:`ecocc.dde.lanes`; constants in :mod:`ecocc.dde.kernels`).  Not for a user DDE.

    Returns
    -------
    DDESolution

    The kernel is generated from the model's laws (:mod:`ecocc.dde.codegen`) and compiled by numba on its
    first use on a machine (cached on disk).  ``t_eval`` is required (outputs only at those times).  Same
    error control, breakpoints, clamping and dense output as the NumPy solver.
    """
    wall0 = _time.perf_counter()
    gen, kw = generic_args(sysm, t_end, rtol=rtol, atol=atol, t_eval=t_eval, max_step=max_step,
                           first_step=first_step, max_steps=max_steps, method=method, max_history_gib=max_history_gib,
                           overlap=overlap)
    from . import codegen
    fn, info = codegen.kernel(gen, kw)
    code = fn(*(kw[k] for k in ADAPTIVE_ARGS))
    counters, reals = kw["counters"], kw["reals"]
    n_steps, n_rej, nfev, n_clamp, n_inacc, n_out = (int(v) for v in counters)
    t_reached = float(reals[2])
    status, message = _adaptive_status(code, counters, reals, max_steps, kw["max_hist_bytes"], kw["keep_s"],
                                       dmin=kw["dmin"])  # a network's problem starts at t = 0 s
    if progress is not None:
        progress(t_reached)
    return DDESolution(kw["t_eval"][:n_out].copy(), kw["out_y"][:n_out], status, message, t_reached, n_steps, n_rej,
                       nfev, n_clamp, n_inacc, float(reals[0]) if n_steps else math.nan,
                       float(reals[1]) if n_steps else math.nan, _time.perf_counter() - wall0, method,
                       dict(rtol=rtol, atol=np.asarray(atol).tolist(), max_step=max_step,
                            max_history_gib=kw["max_hist_bytes"] / 2.0 ** 30, n_breakpoints=int(kw["bps"].size),
                            delay_min_s=kw["dmin"], overlap=kw["overlap"],
                            delay_max_s=float(np.max(kw["D"][4], initial=0.0)), engine="numba",
                            kernel=gen.name, **info))


def _run_groups(run, G, args):
    """Run the ``G`` groups (members) of a batch kernel ``run(first, stride, *args)`` on :func:`_n_threads` threads,
    each taking the next group not yet taken (``run(g, G, ...)``: group ``g`` alone) until none is left.  A group's
    result depends only on its members, so the numbers do not depend on which thread ran which group.  Taking
    groups one at a time balances the threads where their costs differ: a 100 x 100 XCP map kept its two threads
    busy 1.90x the pool's wall time when each took every other group, 1.99x this way (one run each, 2 cores); a
    call costs about 2 us of dispatch (measured on an empty call), the kernels run without the GIL.  On an
    exception in the caller (Ctrl-C) or in a thread, no thread starts another group: the groups running finish
    (a kernel cannot be stopped), then the exception propagates."""
    import itertools
    from concurrent.futures import ThreadPoolExecutor  # here: its import (logging, threading) costs a run ~5 ms
    nxt = itertools.count()  # next() on a count is atomic under the GIL
    stop = []

    def worker(_):
        for g in iter(nxt.__next__, None):
            if g >= G or stop:
                return
            try:
                run(g, G, *args)
            except BaseException:
                stop.append(True)
                raise

    nt = min(_n_threads(), G)
    with ThreadPoolExecutor(max_workers=nt) as pool:
        try:
            for _ in pool.map(worker, range(nt)):  # re-raises a thread's exception
                pass
        except BaseException:
            stop.append(True)
            raise


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


def solve_adaptive_batch(systems, member_system, member_params, t_end, *, rtol=1e-7, atol=None, t_eval,
                         max_step=math.inf, max_steps=10_000_000, components=None, dynamics_only=False, overlap=False,
                         method="RK45", max_history_gib=DEFAULT_MAX_HISTORY_GIB, kinks=False, out=None):
    """The adaptive kernel for ``B`` members of any model, in lock-step groups (:mod:`ecocc.dde.lanes`).

    Members of one system are advanced :data:`ecocc.dde.aot.LANES` at a time on shared steps, the groups in
    parallel over the cores.  The kernel is generated from the model's laws with the single-run one
    (:mod:`ecocc.dde.codegen`) and compiled on its first use on a machine (cached).

    Parameters
    ----------
    systems : list of NetworkSystem
        Systems of one model on one network that differ only in their delays (an RTT scaling).
    member_system : sequence of int
        Member ``b`` uses ``systems[member_system[b]]``.
    member_params : sequence of ModelParams
        Member ``b``'s parameters (the model's parameter object: its numeric fields may differ between
        members, its options may not).
    t_end : float
        End time, seconds.
    rtol : float
    atol : float or array, optional
        Default: the systems' :meth:`~ecocc.system.NetworkSystem.default_atol`.
    t_eval : array of float
        Output times, seconds.
    max_step : float
        Seconds.
    max_steps : int
    components : sequence of int, optional
        The state components to output (default all).
    dynamics_only : bool
        Integrate (and control the error of) only the flow states, link states and queues, not the counters
        that follow them in the state (lost, arrived, departed, queue area, sent), which feed nothing back;
        ``components`` must then be among those.
    overlap : bool
        Allow steps longer than the smallest delay, with delayed values inside a step corrected iteratively
        (see :func:`ecocc.dde.lanes.lanes_kernel`); without it steps never exceed the smallest delay, as in
        :func:`solve_adaptive`.
    method : {"RK45", "RK23"}
    max_history_gib : float
        Memory bound of each lock-step group's stored history, GiB (> 0, ``inf`` for none): a group whose
        history would need more stops, its live members with status ``failed`` (code 5).
    kinks : bool
        Step onto the propagated kinks of the queues (see :func:`ecocc.dde.lanes.lanes_kernel`): where a
        queue crosses a level at which its link's signal has a kink (RED's thresholds), or is held at or
        released from a bound, or where a switching function of the signal in the delayed load changes sign
        (XCP's feedback and shuffled traffic), every flow reading it sees the kink one backward delay later, and
        the shared steps end there instead of straddling it (each straddling step was rejected several times);
        for XCP the breakpoints also go a second delay deep (:data:`LANES_KINKS_DEPTH`).  Off:
        the single kernel's steps (with identical lanes, exactly its steps), except that a model whose AQM
        drops kink at the same queue levels (RED: Reno, HSTCP, Scalable TCP) retakes a step rejected across
        such a level at the located crossing either way (docs/notes/redkink.md).
    out : ndarray, optional
        Where to write the outputs: a C-contiguous float64 array of shape ``(R, len(t_eval),
        len(components))`` with ``R >= B + 1`` (row ``B`` takes the padding lanes' outputs).  The returned
        ``out_y`` is then a view of its first ``B`` rows, so a caller that runs many batches can reuse one
        buffer instead of a fresh one per call (a fresh 80 MB array costs its page faults on every call;
        ``simulate_map`` reuses one, docs/notes/mapbuf.md); it must read each batch's outputs before the next
        call.  Default: a new array.

    Returns
    -------
    out_y : ndarray
        ``(B, len(t_eval), len(components))`` (NaN after a member failed).
    status : list of Status
        One per member.
    counters : ndarray
        ``(B, 6)``: steps, rejected, nfev, clamp events, inaccurate steps, outputs written (steps, rejections
        and nfev are its group's).
    """
    from . import codegen
    ms = np.asarray(member_system, dtype=np.int64)
    B = ms.size
    if len(member_params) != B:
        raise InputError("member_params", f"{len(member_params)} parameter sets", f"one per member ({B})")
    used = [int(i) for i in np.unique(ms)]  # only the systems this call uses
    for i in used:
        check_engine("numba", systems[i].model, systems[i].net, kernel="lanes")
        why = codegen.supported(systems[i]) or _variant_gap(systems[i], "lanes")
        if why is not None:
            raise InputError("engine", "numba", f"'numpy' for {why}")
    per_sys = {i: _method_args(systems[i], t_end, rtol=rtol, t_eval=t_eval, max_step=max_step, first_step=None,
                               atol=systems[i].default_atol() if atol is None else atol, max_steps=max_steps,
                               method=method, max_history_gib=max_history_gib,
                               breakpoint_depth=LANES_KINKS_DEPTH.get(systems[i].model.name) if kinks else None)
                for i in used}
    s0 = systems[used[0]]
    gen = codegen.generate(s0)
    W = gen.lanes  # members per group (the model's width, codegen._lanes_count)
    data = {i: codegen.kernel_data(systems[i], gen)[0] for i in used}
    D0 = data[used[0]]
    for i in used:
        if codegen.generate(systems[i]) is not gen:
            raise InputError("systems", i, "systems of one model with the same options")
        for k, v in enumerate(data[i]):
            if k in (4, 5, 13, 14, 15):  # delays, RTTs, static fields, parameters: per system / member
                continue
            same = np.array_equal(v, D0[k]) if isinstance(v, np.ndarray) else v == D0[k]
            if not same:
                raise InputError("systems", i, "systems of one network that differ only in their delays")
        for k in ("dcomp", "Cc", "t_eval", "atol_v", "logc"):
            if not np.array_equal(per_sys[i][k], per_sys[used[0]][k]):
                raise InputError("systems", i, "systems of one network that differ only in their delays")
    fields = {}  # (system, parameter object) -> (y0, FST, LST, par), computed once
    checked = set()  # parameter objects whose options were checked (once each, not once per system)
    for b in range(B):
        Pm = member_params[b]
        if id(Pm) not in checked:
            if codegen.generate_for(s0, Pm) is not gen:
                raise InputError(f"member_params[{b}]", Pm, "parameters with the same options (strings, booleans, "
                                 "None) as the other members: only numeric fields may differ")
            checked.add(id(Pm))
        key = (int(ms[b]), id(Pm))
        if key not in fields:
            fields[key] = codegen.member_fields(systems[ms[b]], gen, Pm)
    # groups: the members of one system, W at a time; a short last group repeats its last member
    lanes_of = []
    for i in used:
        idx = np.flatnonzero(ms == i)
        for g0 in range(0, idx.size, W):
            members = idx[g0:g0 + W]
            lanes_of.append(np.concatenate([members, np.full(W - members.size, members[-1])]))
    grp = np.array(lanes_of, dtype=np.int64)  # (G, W) member of each lane
    # each member's own lane (its first: a padding copy comes after it) and where each lane writes its outputs:
    # its member's row, a padding copy into a spare row B
    own = np.unique(grp.ravel(), return_index=True)[1]
    orow = np.full(grp.size, B, dtype=np.int64)
    orow[own] = np.arange(B)
    orow = orow.reshape(grp.shape)
    G = grp.shape[0]
    sys_of = ms[grp[:, 0]]
    bl = [per_sys[i]["bps"] for i in sys_of]
    ptr = np.zeros(G + 1, dtype=np.int64)
    np.cumsum([b.size for b in bl], out=ptr[1:])
    first = per_sys[used[0]]
    ne, n = first["out_y"].shape
    qb = s0.layout["queue"]
    iq, L = int(qb.start), int(s0.n_links)
    n_int = iq + L if dynamics_only else n
    ocomp = np.arange(n, dtype=np.int64) if components is None else np.asarray(components, dtype=np.int64)
    if ocomp.ndim != 1 or ocomp.size == 0 or ocomp.min() < 0 or ocomp.max() >= n_int:
        raise InputError("components", components, f"a non-empty list of state indices in [0, {n_int})"
                         + (" (dynamics_only: flow states, link states and queues)" if dynamics_only else ""))
    no = ocomp.size
    if out is None:
        out = np.empty((B + 1, ne, no))
    elif not (isinstance(out, np.ndarray) and out.dtype == np.float64 and out.flags.c_contiguous and out.ndim == 3
              and out.shape[0] >= B + 1 and out.shape[1:] == (ne, no)):
        raise InputError("out", getattr(out, "shape", type(out).__name__),
                         f"a C-contiguous float64 array of shape (>= {B + 1}, {ne}, {no})")

    f_of = [fields[(int(ms[b]), id(member_params[b]))] for b in grp.ravel()]

    def lane_flat(k):  # field k of every lane -> (G, n * W) or (G, k, n * W), lane-flat: [q * W + w]
        a = np.stack([f[k] for f in f_of])
        a = np.moveaxis(a.reshape((G, W) + a.shape[1:]), 1, -1)
        return np.ascontiguousarray(a.reshape(a.shape[:-2] + (a.shape[-2] * W,)))

    col = dict(first)
    col.update(
        y0=lane_flat(0), FST=lane_flat(1), LST=lane_flat(2), par=lane_flat(3),
        bps=np.concatenate(bl), bps_ptr=ptr, out_y=out[:B + 1], orow=orow,
        dmin=np.array([per_sys[i]["dmin"] for i in sys_of]), keep_s=np.array([per_sys[i]["keep_s"] for i in sys_of]),
        bwd=np.ascontiguousarray(np.stack([data[i][4] for i in sys_of])),
        rtt=np.ascontiguousarray(np.stack([data[i][5] for i in sys_of])),
        hsrc=gen.hsrc(s0.n_flows, L), iq=iq, L=L, buf=np.array(s0.a.buffer_pkts, dtype=float, order="C"),
        Dg=tuple(D0[k] for k in (0, 1, 2, 3, 6, 7, 8, 9, 10, 11, 12)),
        n_int=int(n_int), ocomp=ocomp, overlap=bool(overlap), kinks=bool(kinks), counters=np.zeros((G, W, 6), dtype=np.int64),
        reals=np.zeros((G, W, N_REALS)), codes=np.zeros((G, W), dtype=np.int64), first=0, stride=1)
    run, info = codegen.kernel(gen, col, "lanes")  # releases the GIL: _run_groups, a group per call
    _last_lanes_info.clear()
    _last_lanes_info.update(info, kernel=gen.name)
    _run_groups(run, G, [col[k] for k in LANES_ARGS[2:]])
    out = col["out_y"][:B]
    counters, reals = col["counters"].reshape(G * W, 6)[own], col["reals"].reshape(G * W, N_REALS)[own]
    code_of = col["codes"].ravel()[own]
    for b in np.flatnonzero(counters[:, 5] < ne):  # NaN after a member failed
        out[b, counters[b, 5]:] = np.nan
    status = [_adaptive_status(int(c), counters[b], reals[b], max_steps)[0] for b, c in enumerate(code_of)]
    return out, status, counters


#: how the last :func:`solve_adaptive_batch` of this process obtained its kernel (``codegen.kernel``'s info)
_last_lanes_info: dict = {}


def lanes_kernel_info() -> dict:
    """How this process's last lock-step batch obtained its kernel.

    Returns
    -------
    dict
        Empty before the first batch; else ``compiled`` (``"aot"`` or ``"jit"``), the module or why none was
        used, whether it was built now, ``kernel`` (the generated module's name).
    """
    return dict(_last_lanes_info)
