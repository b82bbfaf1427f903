"""``simulate``: one call from a network and a model to a :class:`Trajectory`."""
from __future__ import annotations

import math

import numpy as np

from .dde.adaptive import Status, solve_dde
from .dde.options import DEFAULT_MAX_HISTORY_GIB
from .errors import InputError, check, check_finite
from .models import get_model
from .network import Network
from .results import Trajectory
from .system import NetworkSystem

SOLVERS = ("adaptive", "fixed")


def output_grid(t_end: float, output_dt_s: float | None) -> np.ndarray:
    """Output times of a run.

    Parameters
    ----------
    t_end : float
        Simulated time in seconds.
    output_dt_s : float, optional
        Sampling interval in seconds (default ``t_end / 2000``).

    Returns
    -------
    numpy.ndarray
        ``0, dt, 2 dt, ...`` and ``t_end``.
    """
    if output_dt_s is None:
        output_dt_s = t_end / 2000
    output_dt_s = check_finite("output_dt_s", output_dt_s, positive=True)
    from .dde.options import MAX_SAMPLES
    check(t_end / output_dt_s <= MAX_SAMPLES, "output_dt_s", output_dt_s,
          f"a sampling interval giving at most {MAX_SAMPLES} samples over t_end = {t_end:g} s")
    t_eval = np.arange(0.0, t_end + 0.5 * output_dt_s, output_dt_s)
    t_eval = t_eval[t_eval <= t_end]
    if t_eval[-1] < t_end:
        t_eval = np.append(t_eval, t_end)
    return t_eval


def simulate(network: Network, model="aecp", params=None, *, t_end_s: float, output_dt_s: float | None = None,
             solver: str = "adaptive", rtol: float = 1e-7, atol=None, queue_atol_pkts: float | None = None,
             step_s: float | None = None,
             max_step_s: float = math.inf, summary_window_s: float | None = None, progress: bool = False,
             name: str | None = None, engine: str = "auto", checkpoint=None, checkpoint_every_s: float = 30.0,
             rtt_includes_queueing: bool = False, load_rtt: str = "current", protocols=None,
             keep_checkpoint: bool = False,
             method: str = "RK45", max_history_gib: float = DEFAULT_MAX_HISTORY_GIB, past: str = "silent",
             overlap: bool = False, **param_overrides) -> Trajectory:
    """Simulate ``model`` on ``network`` from 0 to ``t_end_s`` seconds.

    Parameters
    ----------
    network : Network
        Links, flows and cross traffic (packets/s, seconds).
    model : str or NetworkModel
        A registry name (``"aecp"``, ``"cltcp"``, ``"petcp"``, ``"symbiosis"``,
        ``"reno"``) or a model instance.
    params : ModelParams or dict or None, optional
        The model's parameter object (None: the papers' defaults); a dict per protocol on a mixed network.
    t_end_s : float
        Simulated time in seconds.
    output_dt_s : float, optional
        Sampling interval of the output, seconds (default ``t_end_s / 2000``).
    solver : {"adaptive", "fixed"}
        The adaptive method of steps (default) or the fixed-step RK4 batch
        integrator (``step_s`` required).
    rtol : float, optional
        Relative tolerance of the adaptive solver.
    atol : float or array_like or None, optional
        Absolute tolerance of the adaptive solver, one value or one per state component (packets for
        queues and counters); None: :meth:`NetworkSystem.default_atol`.
    queue_atol_pkts : float or None, optional
        With ``atol=None``: the queues' absolute tolerance, packets (> 0), the other components keeping
        :meth:`NetworkSystem.default_atol`'s; None: its default, 1e-4 packets, or ``rtol / g`` if smaller where the
        signal reads the queue linearly with slope ``g`` (PE-TCP: ``rtol T C``, 1.5e-5 packets at rtol 1e-7,
        15,000 packets/s, T = 0.01 s).  A law that reads the queue's level (RED's drop
        fraction between ``min_th`` and ``max_th``) needs less: Reno under RED meets 1e-6 relative in the aggregate
        rate at rtol 1e-7 with 1e-6 packets, not with 1e-4 (README, "Why Reno's accuracy misses").  The value
        used is in the result's ``solver["queue_atol_pkts"]``.
    step_s : float or None, optional
        Step of the fixed-step solver, seconds (required with ``solver="fixed"``, None otherwise).
    max_step_s : float, optional
        Largest step of the adaptive solver, seconds (``inf``: only the smallest delay caps it; must be
        ``inf`` with ``solver="fixed"``).
    method : {"RK45", "RK23"}
        The adaptive solver's Runge--Kutta pair: Dormand--Prince 5(4)
        (default) or Bogacki--Shampine 3(2); both engines (the compiled one
        runs the same generic integrator with the other tableau).
    max_history_gib : float, optional
        Memory bound of the adaptive solver's stored history (the past within 1.5 x the largest delay), GiB
        (> 0, ``inf`` for none; default 2).  A normal run stays far below it; a solution that blows up
        shrinks the step until that window holds millions of steps, and the run then stops with status
        ``failed`` and a message giving the time, the history's size, the step size and the largest
        ``|state|``, the part computed so far returned (before, such a run ate all memory).  Not used by
        ``solver="fixed"``, whose past is sized before it runs.
    summary_window_s : float, optional
        Length of the final window the summary averages over, seconds (default 10 %
        of the run).
    progress : bool
        Show a progress bar (tqdm) on stderr.
    name : str or None, optional
        Name of the run (progress bar, trajectory); None: the network's name.
    engine : {"auto", "numba", "numpy"}
        ``"auto"`` (default): the compiled engine (:mod:`ecocc.dde.engine`) where
        it serves the run -- the adaptive solver for every model (a kernel
        generated from the model's laws, :mod:`ecocc.dde.codegen`, compiled by
        numba on its first use on a machine and cached on disk), the
        fixed-step solver too (not with forward delays) -- and the NumPy solver
        otherwise (no numba: then it says so once).
        ``"numba"``: the compiled engine or an error saying why not.
        ``"numpy"``: the NumPy reference solvers.  ``$ECOCC_ENGINE`` sets what
        ``"auto"`` means.
    checkpoint : path, optional
        The adaptive NumPy solver's (``engine="numpy"``, or ``"auto"`` where the run falls back to it: a mixed
        network the composite kernels do not serve, no numba): save the solver state there every
        ``checkpoint_every_s`` seconds and on Ctrl-C; an existing checkpoint of
        the same run is resumed (see :func:`ecocc.dde.adaptive.solve_dde`).  A run on the compiled engine
        (``"auto"`` where it serves the run) writes none (10 to 1000 times faster; Ctrl-C ends it with status
        ``interrupted``) and says so in ``Trajectory.solver["checkpoint"]`` (None; the path where one was used).
        It is removed when the run completes unless ``keep_checkpoint``: the
        command line keeps it until the outputs are written, then removes it.
    checkpoint_every_s : float, optional
        Wall-clock time between checkpoint saves, seconds (> 0).
    keep_checkpoint : bool, optional
        Leave the checkpoint file after a complete run.
    rtt_includes_queueing : bool
        ``False`` (default, the papers' reading): every feedback delay is the
        constant propagation delay.  ``True``: the round trip of flow ``p`` is
        ``rtt_p + sum_{l in p} q_l(t)/C_l`` -- state-dependent delays,
        ``solver="adaptive"`` only, compiled or NumPy (see
        :class:`ecocc.system.NetworkSystem`).
    load_rtt : {"current", "sent"}
        How a delayed sending rate that depends on the queueing delay (Reno-type ``W/(tau + Q)``) is read
        through a delay ``d``: ``"current"`` (default) ``W(t - d)/(tau + Q(t))``, the delayed window over the
        path's current queueing delay; ``"sent"`` ``W(t - d)/(tau + Q(t - d))``, the rate at the sending time
        (the standard fluid models' reading).  No effect on models whose delayed load does not read the
        queueing delay (AECP, CLTCP, PE-TCP, Symbiosis' own load).  All engines and kernels except the
        lock-step map kernel (see :class:`ecocc.system.NetworkSystem`).
    past : {"silent", "steady"}
        The past before ``t = 0`` (:mod:`ecocc.system`; the state there is the initial state).  ``"silent"``
        (default, the papers' ns-2 runs): no traffic before the flows start, so the delayed loads and the
        flows' own delayed loads switch on one delay after ``t = 0`` -- a jump per distinct delay, all in the
        first round trip; with thousands of flows of distinct RTTs that start-up needs as many short steps
        (TCP Symbiosis at 10,000 flows: more than the default ``max_history_gib``).  ``"steady"``: the flows
        starting at ``t = 0`` were sending at their initial state before it (a constant past with the flows
        active in it): no jumps.  Flows starting later are silent before their start in both.  The two
        are different initial-value problems: their trajectories differ (docs/notes/symstart.md).  Both
        engines.
    overlap : bool
        Compiled adaptive solver only: steps may be longer than the smallest delay (default False: every
        step is capped by it, the method of steps of both engines).  A delayed value inside the step being
        taken is predicted by extrapolating the last history segment, then corrected with the step's own
        continuous extension pass after pass until two passes agree to a tenth of the tolerance (else the
        step is halved, and the later steps are bounded by half the failed one, a bound that grows by 2 % per
        accepted step: ``OVERLAP_CAP``, ``OVERLAP_RELAX`` in :mod:`ecocc.dde.kernels`): the lock-step map
        kernel's overlap mode (:func:`ecocc.dde.engine.solve_adaptive`).
        Fewer steps where the smallest delay, not the dynamics, limits them (small RTTs; calm periods of
        networks with short and long paths); see docs/notes/overlap1.md.
    protocols : dict, optional
        Mixed protocols (:mod:`ecocc.mixed`): ``{name: {"model": "reno", **fields}}``, protocol names a
        :attr:`Flow.protocol` may use besides the registry names.  A network whose flows name several
        protocols runs the composite of the member laws (compiled: :mod:`ecocc.dde.codegen_mixed`); ``params``
        is then a dict
        ``{protocol: ModelParams or dict of fields}`` and overrides are prefixed ``protocol__field``.
        A network whose flows all resolve to one protocol runs that model exactly as ``model=`` would.
    **param_overrides
        Model parameters to change, e.g. ``alpha_per_s=1``
        (mixed networks: ``reno__aqm="droptail"``).

    Returns
    -------
    Trajectory
        The sampled run with its status and message (:class:`ecocc.results.Trajectory`).

    Raises
    ------
    InputError
        For a bad input, or a run too large to finish (:mod:`ecocc.limits`).
    """
    check(isinstance(network, Network), "network", type(network).__name__, "a Network")
    from .mixed import Mixed, MixedSystem, resolve_protocols
    members, flow_member = resolve_protocols(network, model, params, protocols, param_overrides)
    mixed = Mixed(members, flow_member) if len(members) > 1 else None
    if mixed is None:
        (m, P), = members.values()
    else:
        m, P = mixed, None  # compiled: the composite kernel generated from the member laws (dde.codegen_mixed)
    t_end = check_finite("t_end_s", t_end_s, positive=True)
    check(solver in SOLVERS, "solver", solver, f"one of {SOLVERS}")
    from .dde.engine import resolve_engine
    requested = engine
    engine = resolve_engine(engine, None if mixed is not None else m, network, kernel=solver,
                            mixed=mixed is not None)
    t_eval = output_grid(t_end, output_dt_s)
    # every solver option is checked before anything runs (ecocc.dde.options): a negative atol switched
    # error control off, max_step_s = 0 looped on zero-length steps, a negative one ran time backwards
    from .dde import options as opt
    rtol = opt.rtol(rtol)
    # a user's simulation never wants error control off (solve_dde allows it, to force fixed steps)
    check(rtol < 1.0, "rtol", rtol, "a relative tolerance in [2.22e-14, 1) (1 or more controls nothing)")
    max_step_s = opt.max_step(max_step_s, "max_step_s")
    if queue_atol_pkts is not None:
        queue_atol_pkts = opt.real("queue_atol_pkts", queue_atol_pkts, lo=0.0, lo_open=True,
                                   allowed="a number of packets > 0")
        check(atol is None, "queue_atol_pkts", queue_atol_pkts,
              "None when atol is given (atol sets every component's absolute tolerance, the queues' too)")
        check(solver == "adaptive", "queue_atol_pkts", queue_atol_pkts,
              "None with solver='fixed' (a fixed-step run has no error control)")
    max_history_gib = opt.max_history_gib(max_history_gib)
    overlap = opt.flag("overlap", overlap)
    check(not overlap or solver == "adaptive", "overlap", overlap,
          "False unless solver='adaptive' (the fixed-step solvers have their own grid)")
    check(not overlap or requested != "numpy", "overlap", overlap,
          "False with engine='numpy' (only the compiled adaptive kernel steps past the smallest delay)")
    if solver == "fixed":
        check(step_s is not None, "step_s", step_s, "a step in seconds (> 0) for solver='fixed'")
        step_s = opt.real("step_s", step_s, lo=0.0, lo_open=True, allowed="a finite number of seconds > 0")
        check(math.isinf(max_step_s), "max_step_s", max_step_s, "inf for solver='fixed' (its step is step_s)")
        check(t_end / step_s <= 1e8, "step_s", step_s,
              f"a step giving at most 1e8 grid steps over t_end_s = {t_end:g} s")
    else:
        check(step_s is None, "step_s", step_s, "None for solver='adaptive' (it chooses its steps; "
              "limit them with max_step_s)")
    if summary_window_s is not None:
        summary_window_s = opt.real("summary_window_s", summary_window_s, lo=0.0, lo_open=True, hi=t_end,
                                    allowed=f"a number of seconds in (0, t_end_s = {t_end:g}]")
    progress = opt.flag("progress", progress)
    checkpoint_every_s = opt.real("checkpoint_every_s", checkpoint_every_s, lo=0.0, lo_open=True,
                                  allowed="a finite number of seconds > 0")
    from .dde.adaptive import METHODS
    check(isinstance(method, str) and method in METHODS, "method", method, f"one of {METHODS}")
    check(solver != "fixed" or method == "RK45", "method", method,
          "'RK45' (the default) with solver='fixed', which is classical RK4 on its own grid")
    check(checkpoint is None or (solver == "adaptive" and requested != "numba"), "checkpoint", checkpoint,
          "None unless solver='adaptive' and engine 'numpy' or 'auto' (the adaptive NumPy solver checkpoints; "
          "'auto' uses it where the run falls back to that solver)")
    rtt_includes_queueing = opt.flag("rtt_includes_queueing", rtt_includes_queueing)
    from .system import check_past
    past = check_past(past)
    check(not rtt_includes_queueing or solver == "adaptive", "rtt_includes_queueing",
          rtt_includes_queueing, "False unless solver='adaptive' (the NumPy solver and the adaptive compiled "
          "kernel have state-dependent delays; the fixed-step solvers do not)")
    keep_checkpoint = opt.flag("keep_checkpoint", keep_checkpoint)
    from .system import check_load_rtt
    load_rtt = check_load_rtt(load_rtt)
    from .limits import check_run_size
    for mm, pp in members.values():  # no run that would hang or exhaust memory (each member's laws)
        check_run_size(network, mm, pp, t_end, output_dt_s, step_s=step_s if solver == "fixed" else None,
                       max_step_s=max_step_s)
    if mixed is not None:
        sysm = MixedSystem(mixed, network, t_end, rtt_includes_queueing=rtt_includes_queueing, load_rtt=load_rtt,
                            past=past)
        if engine == "numba":
            from .dde.codegen_mixed import gap
            why = gap(sysm, "adaptive" if solver == "adaptive" else "fixed")
            if why is not None:
                if requested == "numba":
                    raise InputError("engine", requested, f"'numpy' or 'auto' for this mixed network: {why}")
                from .dde.engine import _warn_once
                _warn_once(f"mixed-gap-{why}", f"this mixed network runs on the NumPy engine: {why}")
                engine = "numpy"
    else:
        sysm = NetworkSystem(m, network, P, t_end, rtt_includes_queueing=rtt_includes_queueing, load_rtt=load_rtt,
                              past=past)
    if engine == "numba":
        from .dde.engine import installed_kernel_for, warn_no_numba
        if not installed_kernel_for(sysm):  # without numba only an install-time kernel can run (resolve_engine)
            if requested == "numba":
                raise InputError("engine", requested, "'numpy' or 'auto': numba is not installed and no kernel built "
                                 "at install time serves these options (pip install 'ecocc[fast]')")
            warn_no_numba()
            engine = "numpy"
    if overlap and engine == "numpy":  # engine="auto" fell back (said above): the option is not dropped silently
        from .dde.engine import _warn_once
        _warn_once("overlap-numpy", "overlap=True is not applied: this run is on the NumPy solver, whose steps "
                   "never exceed the smallest delay")
    atol = sysm.default_atol(queue_atol_pkts, rtol=rtol) if atol is None else opt.atol(atol, sysm.n)
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=round(t_end, 6), unit="s(sim)", desc=name or network.name, leave=False)

        def cb(t):
            bar.n = round(min(t, t_end), 6)
            bar.refresh()
    else:
        cb = None
    try:
        if engine == "numba":
            from .dde import engine
            if solver == "adaptive":
                sol = engine.solve_adaptive(
                    sysm, t_end, rtol=rtol, atol=atol, t_eval=t_eval,
                    max_step=max_step_s, progress=cb, method=method, max_history_gib=max_history_gib,
                    overlap=overlap)
            else:
                if step_s is None:
                    raise InputError("step_s", step_s, "a step in seconds (> 0) for solver='fixed'")
                sol = engine.solve_fixed(sysm, t_end, check_finite("step_s", step_s, positive=True),
                                              t_eval=t_eval, progress=cb)
        elif solver == "adaptive":
            prob = sysm.problem()
            sol = solve_dde(prob, t_end, rtol=rtol, atol=atol, method=method,
                            t_eval=t_eval, record_steps=False, max_step=max_step_s, progress=cb,
                            checkpoint=checkpoint, checkpoint_every_s=checkpoint_every_s,
                            keep_checkpoint=keep_checkpoint, max_history_gib=max_history_gib)
        else:
            from .dde.fixed import solve_fixed
            if step_s is None:
                raise InputError("step_s", step_s, "a step in seconds (> 0) for solver='fixed'")
            sol = solve_fixed(sysm.problem(), t_end, check_finite("step_s", step_s, positive=True),
                              t_eval=t_eval, progress=cb)
    finally:
        if bar is not None:
            bar.close()
    hint = _startup_hint(sysm, sol, t_end)
    if hint:
        sol.message = f"{sol.message}; {hint}"
    tr = Trajectory.from_solution(sol, sysm, name=name or network.name,
                                  summary_window_s=summary_window_s or 0.1 * t_end)
    notice = _loss_notice(tr)
    if notice:
        tr.message = f"{tr.message}; {notice}"
    tr.solver["past"] = past  # the readings chosen, in the output (summary, NetCDF attributes)
    # the checkpoint this run wrote (only the adaptive NumPy solver writes one), not dropped silently
    tr.solver["checkpoint"] = str(checkpoint) if checkpoint is not None and engine == "numpy" else None
    qa = atol[sysm.layout["queue"].sl]
    if solver == "adaptive" and qa.size:  # the queues' absolute tolerance (one value, or the largest), packets
        tr.solver["queue_atol_pkts"] = float(qa.max())
    tr.solver["load_rtt"] = load_rtt
    tr.solver["rtt_includes_queueing"] = bool(rtt_includes_queueing)
    return tr


#: a link that turns away more than this fraction of its arrivals over the summary window is named in the run's
#: message (:func:`_loss_notice`)
LOSS_NOTICE_RATIO = 0.5


def _loss_notice(tr):
    """One sentence naming the links that turned away more than half of what arrived over the summary window
    (:data:`LOSS_NOTICE_RATIO`), else None.

    The numbers can be right and the setting wrong: a model whose flows do not react to losses (FAST, the AECP
    family) above a buffer too small for its queue, or a loss signal that never reaches the flows (RED on a buffer
    below its ``min_th`` sent none until 2026-11-29: two Reno flows at 7 times the capacity, status success).
    The run's status is unchanged; its message says it, and so does every summary and the command line."""
    if not tr.t_s.size or tr.t_s[-1] <= tr.t_s[0]:
        return None
    t0, t1 = tr.window()  # the summary's window and ratios (Trajectory.summary), without its equilibrium
    lost, arrived = tr.window_change(tr.lost_pkts, t0, t1), tr.window_change(tr.arrived_pkts, t0, t1)
    ratio = np.divide(lost, arrived, out=np.zeros_like(lost), where=arrived > 0)
    heavy = np.flatnonzero(ratio > LOSS_NOTICE_RATIO)
    if not heavy.size:
        return None
    what = ", ".join(f"{tr.link_names[j]} {100 * ratio[j]:.0f} %" for j in heavy)
    return (f"links that turned away more than half of their arrivals over {t0:g}-{t1:g} s: {what} "
            "(their flows send over twice what the link carries, as flows whose law ignores losses do above a buffer "
            "smaller than the queue they need: FAST's fluid law, the AECP family)")


def _startup_hint(sysm, sol, t_end):
    """For a run stopped by its history memory bound during a silent start-up (:mod:`ecocc.system`, ``past``):
    one sentence naming the option that avoids it, with the number of start-up jumps; else None."""
    if sol.status != Status.FAILED or not str(sol.message).startswith("history memory limit reached"):
        return None
    if getattr(sysm, "past", "silent") != "silent":
        return None
    jumps = sysm.startup_jumps(t_end)
    if jumps.size < 2 or sol.t_reached > 1.5 * float(jumps[-1]) + 1e-9:
        return None
    return (f"here the short steps are the start-up's: the flows start at t = 0 with no traffic before "
            f"(past='silent'), so their delayed loads switch on at "
            f"{jumps.size} distinct times in [{jumps[0]:.3g}, {jumps[-1]:.3g}] s, each a jump the solver steps onto; "
            f"past='steady' (flows sending at their initial state before t = 0; command line --past steady) has no "
            f"such start-up")


__all__ = ["simulate", "Status"]
