"""Parameter sweeps in one integration: ``simulate_batch``.

``B`` members (parameter sets and/or RTT scalings of one network) are
advanced together by the fixed-step RK4 integrator
(:func:`ecocc.dde.fixed.solve_fixed`) with array operations over a leading
batch axis, which amortises the Python overhead of each right-hand-side
evaluation over the members.

How the batch is assembled:

* every member's parameters are validated by the model's ``Params`` class
  (so a bad member fails before any integration);
* parameters equal across members stay scalars (the arithmetic of a member
  is then the same as in a single run); numeric parameters that differ
  become arrays of shape ``(B, 1)`` that the model laws broadcast;
  non-numeric parameters must agree across members;
* per-member static arrays (``flow_static``/``link_static``), delays and
  initial states come from one :class:`~ecocc.system.NetworkSystem` per
  member, stacked along the batch axis; lookups get delays ``(B, m)`` when
  RTTs are scaled.
"""
from __future__ import annotations

import dataclasses
import math
import numbers

import numpy as np

from .dde.adaptive import Status
from .errors import InputError, check, check_finite
from .models import get_model
from .network import Network
from .results import Trajectory, active_mask, flow_rates, flow_values
from .system import NetworkSystem


class BatchParams:
    """Params-like object: scalar fields, or ``(B, 1)`` arrays where members differ.

    Parameters
    ----------
    members : list of ModelParams
        Validated parameter objects of one model class.
    """

    def __init__(self, members):
        self._members = list(members)
        self._fields = type(self._members[0]).field_names()
        self.varying = []
        for f in self._fields:
            vals = [getattr(p, f) for p in self._members]
            if all(v == vals[0] for v in vals):
                setattr(self, f, vals[0])
            elif all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in vals):
                setattr(self, f, np.asarray(vals, dtype=float)[:, None])
                self.varying.append(f)
            else:
                raise InputError(f"params_list[*].{f}", vals, "equal values across members (only numbers may vary)")

    def as_dict(self) -> dict:
        """Return the parameters by field name.

        Returns
        -------
        dict
            ``{field: value}``: a scalar where the members agree, a ``(B, 1)`` array where they differ.
        """
        return {f: getattr(self, f) for f in self._fields}


def _stack(arrs):
    arrs = [np.asarray(a, dtype=float) for a in arrs]
    if all(a.shape == arrs[0].shape and np.array_equal(a, arrs[0]) for a in arrs):
        return arrs[0]
    return np.stack(arrs)


def simulate_batch(network: Network, model="aecp", params_list=None, *, rtt_scale=None, t_end_s: float,
                   step_s: float, output_dt_s: float | None = None, engine: str = "auto", past: str = "silent",
                   load_rtt: str = "current"):
    """Simulate ``B`` members of a parameter sweep in one fixed-step integration.

    Parameters
    ----------
    network : Network
        The network of every member (RTTs scaled per member by ``rtt_scale``).
    model : str or NetworkModel
        Registry name or model instance, the same for every member.
    params_list : list, optional
        One entry per member: the model's parameter object, or a dict of
        overrides of the default parameters (e.g. ``{"alpha_per_s": 1.0}``).
        Default: the default parameters for every member.
    rtt_scale : sequence of float, optional
        Per-member factor (> 0) applied to every RTT (and forward / link
        delay) of ``network``.  With ``params_list`` both must have the
        same length (or one of them length 1).
    t_end_s : float
        Simulated time in seconds.
    step_s : float
        RK4 step in seconds (see :func:`ecocc.dde.fixed.solve_fixed`).
    output_dt_s : float, optional
        Sampling interval of the output (default ``t_end_s / 2000``).
    engine : {"auto", "numpy", "numba"}
        ``"numba"`` runs the compiled RK4 kernel of :mod:`ecocc.dde.kernels`
        (generated from the model's laws, members in parallel; numba required); ``"auto"``
        (default) takes it where it applies, else the NumPy solver.  Both
        follow ``past`` and ``load_rtt``.
    past : {"silent", "steady"}
        The past before ``t = 0`` of every member (as :func:`ecocc.simulate`'s ``past``; the state there is
        the initial state).  ``"silent"`` (default): no traffic before the flows start, so their delayed
        loads switch on one delay after ``t = 0``.  ``"steady"``: the flows starting at ``t = 0`` were
        sending at their initial state before it (no start-up jumps).  The two are different
        initial-value problems (docs/notes/symstart.md).
    load_rtt : {"current", "sent"}
        How a delayed Reno-type rate ``W/(tau + Q)`` is read through a delay ``d`` (as
        :func:`ecocc.simulate`'s ``load_rtt``): ``"current"`` (default) ``W(t - d)/(tau + Q(t))``;
        ``"sent"`` ``W(t - d)/(tau + Q(t - d))``, the rate at the sending time.  No effect on models whose
        delayed load does not read the queueing delay (docs/notes/renosent.md).

    Returns
    -------
    xarray.Dataset
        Dims ``member``, ``time``, ``flow``, ``link``: the variables of
        :meth:`Trajectory.to_xarray` for every member, plus ``status``, ``message`` (as
        :func:`ecocc.simulate`'s, naming a link that turned away over half of its arrivals over the last
        tenth of the run) and ``t_failed_s`` per member.  Coordinates: every parameter that varies (per member),
        ``rtt_scale``.  ``attrs`` hold the solver settings, the readings ``past`` and ``load_rtt``, and the
        wall time.
    """
    import xarray as xr

    from .dde.fixed import solve_fixed
    from .simulate import _loss_notice

    m = get_model(model)
    check(isinstance(network, Network), "network", type(network).__name__, "a Network")
    t_end = check_finite("t_end_s", t_end_s, positive=True)
    h = check_finite("step_s", step_s, positive=True)
    from .system import check_load_rtt, check_past
    past, load_rtt = check_past(past), check_load_rtt(load_rtt)
    from .dde.engine import resolve_engine
    engine = resolve_engine(engine, m, network, kernel="fixed")
    plist = [None] if params_list is None else list(params_list)
    scales = [1.0] if rtt_scale is None else [check_finite("rtt_scale[*]", s, positive=True)
                                               for s in np.atleast_1d(rtt_scale)]
    check(len(plist) > 0, "params_list", params_list, "at least one member")
    check(len(scales) > 0, "rtt_scale", rtt_scale, "at least one factor")
    B = max(len(plist), len(scales))
    check(len(plist) in (1, B) and len(scales) in (1, B), "rtt_scale", rtt_scale,
          f"as many factors as params_list entries ({len(plist)}), or one")
    plist = plist * B if len(plist) == 1 else plist
    scales = scales * B if len(scales) == 1 else scales
    members = []
    for i, p in enumerate(plist):
        try:
            if isinstance(p, dict):
                members.append(m.make_params(None, **p))
            else:
                members.append(m.make_params(p))
        except InputError as exc:
            raise InputError(f"params_list[{i}]." + exc.field, exc.value, exc.allowed) from None
    from .simulate import output_grid
    t_eval = output_grid(t_end, output_dt_s)

    readings = dict(past=past, load_rtt=load_rtt)  # every member's, and the shared structure's
    systems = [NetworkSystem(m, network.scaled(rtt_scale=s), P, t_end, **readings) for P, s in zip(members, scales)]
    Y0 = np.stack([s.initial_state() for s in systems])
    bs = NetworkSystem(m, network, members[0], t_end, **readings)  # structure (routing, layout) shared by all members
    top = np.max([s.a.buffer_pkts for s in systems], axis=0)
    if not np.array_equal(top, bs.a.buffer_pkts) or any(not np.array_equal(top, s.a.buffer_pkts) for s in systems):
        # members that differ in their queues' bound (RED's max_th): one bound per link in the solvers, the largest
        for s in systems + [bs]:
            s.set_queue_bound(top)
    bs.P = BatchParams(members)
    bs.st = {k: _stack([s.st[k] for s in systems]) for k in bs.st}
    bs.lst = {k: _stack([s.lst[k] for s in systems]) for k in bs.lst}
    bs.st_pair_flow = {k: _stack([s.st_pair_flow[k] for s in systems]) for k in bs.st_pair_flow}
    bs.lst_pair = {k: _stack([s.lst_pair[k] for s in systems]) for k in bs.lst_pair}
    bs.bwd = _stack([s.bwd for s in systems])
    bs.fwd = _stack([s.fwd for s in systems])
    bs.rtt_s = _stack([s.a.rtt_s for s in systems])
    if engine == "numba":  # the members' systems; no stacked lookups (their arrival entries stay unbuilt)
        from .dde.engine import solve_fixed as solve_fixed_compiled
        sol = solve_fixed_compiled(systems, t_end, h, t_eval=t_eval)
    else:
        if m.signal_uses_arrival:
            bs.arr_delays = _stack([s.arr_delays for s in systems])
        for i, lk in enumerate(bs.lookups):
            lk.delays = _stack([s.lookups[i].delays for s in systems])
        sol = solve_fixed(bs.problem(y0=Y0), t_end, h, t_eval=t_eval)

    member_status = sol.settings.get("member_status") or [sol.status.value] * B
    t_failed = np.asarray(sol.settings.get("member_t_failed_s") or [math.nan] * B, dtype=float)
    trs = []
    for b, sysm in enumerate(systems):
        st_b = Status(member_status[b]) if sol.status != Status.INTERRUPTED else Status.INTERRUPTED
        msg = sol.message if st_b != Status.FAILED else f"non-finite state at t = {t_failed[b]:.9g} s"
        sol_b = dataclasses.replace(sol, y=sol.y[:, b, :], status=st_b, message=msg)
        tr = Trajectory.from_solution(sol_b, sysm, name=network.name, summary_window_s=0.1 * t_end)
        notice = _loss_notice(tr)  # as simulate's: a link losing most of what arrives is named, status unchanged
        if notice:
            tr.message = f"{tr.message}; {notice}"
        trs.append(tr)
    # one dataset per member (Trajectory.to_xarray), stacked along "member"
    ds = xr.concat([t.to_xarray() for t in trs], dim="member", data_vars="all", coords="minimal",
                   compat="override", join="override", combine_attrs="drop")
    ds["capacity"] = ds["capacity"].isel(member=0)  # members share the links (only delays are scaled)
    ds["status"] = ("member", np.array(member_status, dtype=object))
    ds["message"] = ("member", np.array([t.message for t in trs], dtype=object))
    ds["t_failed_s"] = ("member", t_failed, {"units": "s"})
    coords = {"member": np.arange(B), "rtt_scale": ("member", np.asarray(scales, dtype=float))}
    for f in bs.P.varying:
        coords[f] = ("member", np.array([getattr(p, f) for p in members], dtype=float))
    attrs = {"model": m.name, "scenario": network.name, "solver": sol.method, "status": sol.status.value,
             "message": sol.message, "step_s": sol.settings["step_s"], "nfev": sol.nfev, "wall_s": sol.wall_s,
             "packet_bytes": network.packet_bytes, "past": past, "load_rtt": load_rtt}
    return ds.assign_coords(coords).assign_attrs(attrs)


#: grid axes of :func:`simulate_map` with ``engine="numba"`` besides the model's numeric parameters (every numeric
#: parameter is a per-member input of the generated lock-step kernel)
MAP_AXES_NUMBA = ("rtt_scale",)


def _last_window(t, t_end, window):
    """Which sample times ``t`` lie in the last ``window`` seconds before ``t_end`` (with a round-off margin)."""
    return t >= t_end - window - 1e-9 * t_end


def _window_stats(t, q, t_end, window, rtol, floor_pkts=1e-6):
    """Queue samples ``q`` (``(..., time, link)``) at times ``t``: per link the swing (peak to peak) and the
    mean over the last ``window`` seconds, and the growth rate of the largest swing over the links between
    the window before and the last one (1/s).  The rate is NaN when the run is shorter than two windows or
    when either swing is below ``floor_pkts`` or ``10 rtol max(1, |mean queue|)``: a run at tolerance
    ``rtol`` resolves swings above that, not below (``benchmarks/run.py`` compares the rates of a map at
    rtol 1e-7 with those at rtol 1e-9)."""
    eps = 1e-9 * t_end
    last = _last_window(t, t_end, window)
    prev = (t >= t_end - 2 * window - eps) & (t < t_end - window - eps)
    ql = q[..., last, :]
    swing, mean = ql.max(axis=-2) - ql.min(axis=-2), ql.mean(axis=-2)
    rate = np.full(swing.shape[:-1], np.nan)
    if t_end - 2 * window >= -eps and prev.any():
        qp = q[..., prev, :]
        s1, s0 = swing.max(axis=-1), (qp.max(axis=-2) - qp.min(axis=-2)).max(axis=-1)
        floor = np.maximum(floor_pkts, 10 * rtol * np.maximum(1.0, np.abs(mean).max(axis=-1)))
        ok = (s1 > floor) & (s0 > floor)
        rate[ok] = np.log(s1[ok] / s0[ok]) / window
    return swing, mean, rate


def _held_links(q, t, t_end, window, buffer_pkts, thr):
    """Queue samples ``q`` (``(..., time, link)``): per link, whether the queue stayed within ``thr`` packets of a
    bound (empty, or the buffer ``buffer_pkts`` full) at every sample of the last ``window`` seconds.  Such a
    queue is flat whatever the flows do (an empty queue passes any arrival rate below the capacity), so it says
    nothing about whether the flows have settled."""
    ql = q[..., _last_window(t, t_end, window), :]
    return (ql.max(axis=-2) <= thr) | (ql.min(axis=-2) >= np.asarray(buffer_pkts, float) - thr)


def _held_rate_swing(flow_swing, held, link_flows):
    """The largest peak-to-peak swing (packets/s) of the sending rate of a flow that crosses a link in ``held``,
    from the flows' swings over the last window ``flow_swing`` (``(..., flow)``), ``held`` (``(..., link)`` bool)
    and ``link_flows`` (``(link, flow)`` bool incidence); NaN where no link is held."""
    flows = (np.asarray(held, bool)[..., :, None] & np.asarray(link_flows, bool)).any(axis=-2)
    return np.where(flows.any(axis=-1), np.where(flows, flow_swing, -np.inf).max(axis=-1), np.nan)


def _rate_swing(t, rate, t_end, window):
    """Per flow, the peak-to-peak swing of ``rate`` (``(time, flow)``, packets/s) over the last ``window`` seconds."""
    r = np.asarray(rate)[_last_window(t, t_end, window)]
    return r.max(axis=0) - r.min(axis=0)


#: codes of ``regime`` in :func:`simulate_map` (NetCDF ``flag_values``/``flag_meanings``)
REGIMES = {-1: "not_classified", 0: "settled", 1: "decaying_not_settled", 2: "growing_or_limit_cycle",
           3: "queue_at_bound_rates_changing"}


def classify_regime(ok, settled, rate_per_s, window_s, decay_ratio, rates_changing=None):
    """Return the regime code per point (see :data:`REGIMES`).

    Decaying when ``rate < ln(decay_ratio) / window_s``, i.e. the swing shrank by the factor
    ``decay_ratio`` from one window to the next.  A point whose queues are flat but whose flows' rates are still
    changing (``rates_changing``: a queue held at a bound, e.g. a link that has not filled yet) is code 3.

    Parameters
    ----------
    ok : array_like of bool
        The point's run succeeded.
    settled : array_like of bool
        The point passed the settled test.
    rate_per_s : array_like of float
        Growth rate of the queue swing between the last two windows, 1/s (NaN: not measured).
    window_s : float
        Window length, seconds.
    decay_ratio : float
        In (0, 1): the factor the swing must shrink by per window.
    rates_changing : array_like of bool, optional
        The point's queues passed the settled test only because a queue sat at a bound while the rates of its
        flows were still changing (``settled`` is False there).  None: no such point.

    Returns
    -------
    numpy.ndarray
        ``int8`` codes, shape of ``ok``: 0 settled, 1 decaying but not settled, 2 growing or limit cycle,
        3 a queue at a bound with its flows' rates still changing, -1 not classified (failed run, or an
        unsettled point whose rate is NaN).
    """
    ok = np.asarray(ok, bool)
    settled = np.asarray(settled, bool)
    rate = np.asarray(rate_per_s, float)
    changing = np.zeros(ok.shape, bool) if rates_changing is None else np.asarray(rates_changing, bool)
    limit = math.log(decay_ratio) / window_s
    out = np.full(ok.shape, -1, np.int8)
    out[ok & settled] = 0
    out[ok & ~settled & changing] = 3
    measured = ok & ~settled & ~changing & np.isfinite(rate)
    out[measured & (rate < limit)] = 1
    out[measured & ~(rate < limit)] = 2
    return out


def simulate_map(network, model="aecp", x_name="alpha_per_s", x_values=(0.5, 1.0, 2.0, 4.0),
                 y_name="rtt_scale", y_values=(0.5, 1.0, 2.0), *, t_end_s=60.0, window_s=10.0,
                 swing_threshold_pkts=1.0, sample_dt_s=0.01, engine="auto", rtol=1e-7, atol=None, chunk=1000,
                 progress=False, previous=None, overlap=True, decay_ratio=0.99, on_partial=None,
                 partial_every_s=10.0, max_history_gib=None, kinks=True, past="silent", load_rtt="current",
                 **params):
    """Stability on a 2-D parameter grid by simulating the nonlinear model at every grid point.

    Every point is integrated from the model's initial state to ``t_end_s``
    with the adaptive solver (delays exact, error control, queue clamps
    located).  Each point whose run succeeded falls in one of three classes
    (``regime``):

    * **settled** (``stable``): every link's queue moves by less than
      ``swing_threshold_pkts`` (peak to peak, sampled every ``sample_dt_s``)
      over the last ``window_s`` seconds;
    * **decaying, not settled**: the swing is larger, but it shrank from the
      window before to the last one by at least the factor ``decay_ratio``
      (``swing_growth_rate_per_s < ln(decay_ratio) / window_s``): a longer
      run would settle;
    * **growing or limit cycle**: the swing did not shrink by that factor;
    * **queue at a bound, rates still changing** (not settled): the queues are
      flat, but a queue stayed within ``swing_threshold_pkts`` of a bound
      (empty, or its buffer full) over the last window while the rate of a
      flow crossing it moved by ``swing_threshold_pkts / window_s``
      packets/s or more.  Such a queue is flat whatever the flows do (an
      empty queue passes any arrival below the capacity): a link that has
      not filled yet at ``t_end_s`` (Reno's windows still opening at large
      RTTs) is not a settled point.

    Points whose growth rate could not be measured (a run shorter than two
    windows) are ``not classified``; failed and interrupted runs are
    neither.  The swing and the rate are returned so other thresholds can
    be applied.

    Parameters
    ----------
    network : Network
        The network every point runs on (RTTs scaled by an ``rtt_scale`` axis).
    model : str or NetworkModel
        Registry name or model instance.
    x_name, y_name : str
        A numeric model parameter (e.g. ``"alpha_per_s"``) or ``"rtt_scale"``
        (every RTT multiplied by the value).
    x_values, y_values : sequences of float
        Grid values of each axis, in the parameter's unit (``rtt_scale``: a factor > 0).
    t_end_s : float
        Simulated time of every point, seconds.
    window_s : float
        Length of the measurement window at the end of the run, seconds (<= ``t_end_s``).
    swing_threshold_pkts : float
        A point has settled when every queue's peak-to-peak swing over the last window is below this,
        packets (> 0).
    sample_dt_s : float
        Sampling interval of the queues over the last two windows, seconds.
    engine : {"auto", "numba", "numpy"}
        ``"auto"`` (default): ``"numba"`` where it applies (every model the
        generated kernels serve, :func:`ecocc.dde.engine.codegen_gap`; no
        forward delays), else one :func:`ecocc.simulate` per point on its
        default engine.  ``"numba"``: the compiled lock-step kernel
        (:mod:`ecocc.dde.lanes`, generated from the model's laws): the points
        of one RTT scale advance 8 at a time on shared steps, the groups in
        parallel over the cores; only the flow states, link states and queues
        are integrated.  The kernel is generated and compiled on its first use
        on a machine and cached (:func:`ecocc.dde.codegen.kernel`);
        ``attrs["kernel"]`` says which build ran.  ``"numpy"``: one
        :func:`ecocc.simulate` per point on the NumPy solver (any model; the
        reference, slow).  Every engine follows ``past`` and ``load_rtt``;
        the lock-step kernel reads delayed rates with the current queueing
        delay only, so where ``load_rtt="sent"`` changes the equations (a
        delayed load that reads the queueing delay: Reno, HSTCP and Scalable TCP
        (drop-tail, or RED at its queue's bound), Symbiosis with
        ``available="measured"``; :func:`lanes_gap`) it runs
        one :func:`ecocc.simulate` per point (``"auto"``;
        ``attrs["engine_note"]`` says why) or is refused (``"numba"``).
        Where the two readings are the same equations (AECP, CLTCP, PE-TCP,
        Symbiosis' default load) the lock-step kernel runs "sent".
    past : {"silent", "steady"}
        The past before ``t = 0`` of every point (as :func:`ecocc.simulate`'s ``past``; the state there is
        the initial state).  ``"silent"`` (default): no traffic before the flows start, so their delayed
        loads switch on one delay after ``t = 0``.  ``"steady"``: the flows starting at ``t = 0`` were
        sending at their initial state before it (no start-up jumps).  The two are different
        initial-value problems (docs/notes/symstart.md): a map under one is never resumed as the other.
    load_rtt : {"current", "sent"}
        How a delayed Reno-type rate ``W/(tau + Q)`` is read through a delay ``d`` (as
        :func:`ecocc.simulate`'s ``load_rtt``): ``"current"`` (default) ``W(t - d)/(tau + Q(t))``;
        ``"sent"`` ``W(t - d)/(tau + Q(t - d))``, the rate at the sending time (docs/notes/renosent.md).
    rtol : float
        Relative tolerance of the adaptive solver at every point.
    atol : float or array_like or None
        Absolute tolerance (packets for the queues); None: each system's default.
    max_history_gib : float or None
        Memory bound of each run's stored history, GiB (> 0, ``inf`` for none; None:
        :data:`ecocc.dde.options.DEFAULT_MAX_HISTORY_GIB`): a point simulated on its own whose past would need
        more (a solution that blows up) ends ``failed`` instead of filling the memory; with the compiled map
        kernel, a lock-step group whose shared history would need more ends ``failed`` for all its points.
    progress : bool
        Show a progress bar over the points.
    overlap : bool
        numba engine: steps may be longer than the smallest delay, the delayed
        values inside a step corrected iteratively (default; several times
        fewer steps at small RTTs).  ``False``: steps never exceed the
        smallest delay, as the NumPy solver's.
    kinks : bool
        numba engine: the shared steps end where a queue's kink reaches the flows (a queue crossing a level at
        which its link's signal has a kink, RED's thresholds; a queue held at or released from a bound: one
        backward delay later), instead of straddling it (default; such a step was rejected several times, and
        the points of a lock-step group each bring their own kinks).  ``False``: the single kernel's steps
        (except that a step rejected across one of RED's thresholds is retaken ending at the located
        crossing either way: :func:`ecocc.dde.engine.solve_adaptive_batch`).
    chunk : int
        At most this many members per kernel call (numba); calls are sized
        (whole lock-step groups, from the measured time per point) to take
        about ``partial_every_s / 2`` seconds of wall time.  Progress is
        reported, finished points are handed to ``on_partial`` and Ctrl-C is
        honoured between calls; points not reached are ``"interrupted"``.
    decay_ratio : float
        In (0, 1): a point that has not settled is "decaying" when its swing
        over the last window is below ``decay_ratio`` times the swing over the
        window before (default 0.99: shrinking by at least 1 % per window).
    previous : xarray.Dataset, optional
        An earlier (interrupted) result of the same call: its finished points
        are kept and only its ``"interrupted"`` points are run.
    on_partial : callable, optional
        Called with the map so far (the Dataset this function returns, the points not yet run marked
        ``"interrupted"``) after finished points, at most every ``partial_every_s`` seconds of wall time, so
        a caller can store them as they come (``ecocc sim-map`` does); a killed run then loses at most that
        much work.
    partial_every_s : float
        Least wall-clock time between two calls of ``on_partial``, seconds.
    **params
        Model parameters for every point (e.g. ``r0_pps=10``).

    Returns
    -------
    xarray.Dataset
        On ``(y, x)``: ``stable`` (settled), ``regime`` (-1 not classified, 0 settled, 1 decaying but not
        settled, 2 growing or limit cycle, 3 a queue at a bound with the rates still changing;
        ``flag_values``/``flag_meanings`` attributes), ``held_flow_rate_swing_pps`` (packets/s: the largest
        swing over the last window of the rate of a flow crossing a queue held at a bound; NaN where none
        was), ``status``,
        ``n_steps``; on ``(y, x, link)``:
        ``queue_swing_pkts``, ``queue_mean_pkts`` (over the window); on ``(y, x)`` also
        ``swing_growth_rate_per_s``: how fast the swing shrinks (< 0) or grows between the last two
        windows, to compare with the rightmost characteristic root of the linearization (NaN where a
        swing is below ``max(1e-6, 10 rtol max(1, |mean queue|))`` packet: not resolved by the run).
        ``attrs``: the verdict rule, solver settings, the readings ``past`` and ``load_rtt``, ``wall_s``
        (and ``engine_note`` when ``"auto"`` could not use the lock-step kernel).
    """
    import time

    import xarray as xr

    from .dde.engine import check_engine
    from .simulate import simulate
    from .stability.maps import _unit
    wall0 = time.perf_counter()
    m = get_model(model)
    check(isinstance(network, Network), "network", type(network).__name__, "a Network")
    from .system import check_load_rtt, check_past
    past, load_rtt = check_past(past), check_load_rtt(load_rtt)
    check_engine(engine, m, network, kernel="lanes")
    why_not_lanes = lanes_gap(m, network, load_rtt=load_rtt, params=params)
    if engine == "numba" and why_not_lanes is not None:
        raise InputError("engine", engine, f"'auto' or 'numpy' for {why_not_lanes}")
    point_engine = "numpy" if engine == "numpy" else "auto"  # the engine of simulate() per point
    engine_note = None
    if engine == "auto":
        # the lock-step kernel wherever it applies (the map's default before "auto" existed, whatever
        # $ECOCC_ENGINE says about single runs), else one simulate() per point on its default engine
        try:
            check_engine("numba", m, network, kernel="lanes")
            engine = "numba" if why_not_lanes is None else "numpy"
        except InputError as exc:
            engine = "numpy"
            why_not_lanes = why_not_lanes or exc.allowed
        if engine != "numba":
            engine_note = f"one run per point, not the lock-step kernel ({why_not_lanes})"
    t_end = check_finite("t_end_s", t_end_s, positive=True)
    window = check_finite("window_s", window_s, positive=True)
    check(window <= t_end, "window_s", window_s, f"at most t_end_s = {t_end}")
    dt = check_finite("sample_dt_s", sample_dt_s, positive=True)
    thr = check_finite("swing_threshold_pkts", swing_threshold_pkts, positive=True)
    ratio = check_finite("decay_ratio", decay_ratio, positive=True)
    check(ratio < 1.0, "decay_ratio", decay_ratio, "a number in (0, 1)")
    check(isinstance(chunk, numbers.Integral) and chunk >= 1, "chunk", chunk, "an integer >= 1")
    check(x_name != y_name, "y_name", y_name, f"a name different from x_name = {x_name!r}")
    fields = type(m.make_params(None)).field_names()
    numeric = tuple(f for f, v in m.make_params(None).as_dict().items()
                    if isinstance(v, numbers.Real) and not isinstance(v, bool))
    for axis, name in (("x_name", x_name), ("y_name", y_name)):
        allowed = MAP_AXES_NUMBA + numeric if engine == "numba" else ("rtt_scale",) + tuple(fields)
        check(name in allowed, axis, name, f"one of {allowed}" + (" (engine='numba': rtt_scale or a numeric "
                                                                   "parameter)" if engine == "numba" else ""))
    xs = np.asarray([check_finite(f"x_values[{i}]", v) for i, v in enumerate(np.atleast_1d(x_values))], dtype=float)
    ys = np.asarray([check_finite(f"y_values[{i}]", v) for i, v in enumerate(np.atleast_1d(y_values))], dtype=float)
    check(xs.size > 0, "x_values", x_values, "at least one value")
    check(ys.size > 0, "y_values", y_values, "at least one value")
    base = m.make_params(None, **params)
    from .dde import options as _opt
    max_history_gib = _opt.max_history_gib(_opt.DEFAULT_MAX_HISTORY_GIB if max_history_gib is None
                                           else max_history_gib)
    overlap, kinks = _opt.flag("overlap", overlap), _opt.flag("kinks", kinks)

    for axis, name, vals in (("x_values", x_name, xs), ("y_values", y_name, ys)):  # every value, up front
        for i, v in enumerate(vals):
            if name == "rtt_scale":
                check(v > 0, f"{axis}[{i}] (rtt_scale)", v, "a factor > 0")
                continue
            try:
                m.make_params(base, **{name: v})
            except InputError as exc:
                raise InputError(f"{axis}[{i}] ({name})", v, exc.allowed) from None

    from .limits import MAX_MAP_POINTS, check_run_size
    check(xs.size * ys.size <= MAX_MAP_POINTS, "x_values", f"{xs.size} x {ys.size} points",
          f"at most {MAX_MAP_POINTS} points in all (ecocc.limits.MAX_MAP_POINTS)")
    try:  # every point's run must be able to finish (the smallest RTT scale, the largest gain)
        check_run_size(network, m, base, t_end, dt, axes={x_name: xs, y_name: ys})
    except InputError as exc:
        name = exc.field.split(" ")[0]
        name = "rtt_scale" if name == "rtt_s" else name
        axis = "x_values" if name == x_name else "y_values" if name == y_name else None
        raise InputError(f"{axis}[*] ({name})" if axis else exc.field, exc.value, exc.allowed) from None

    def params_at(xv, yv):
        return m.make_params(base, **{k: v for k, v in ((x_name, xv), (y_name, yv)) if k != "rtt_scale"})

    def scale_at(xv, yv):
        return xv if x_name == "rtt_scale" else (yv if y_name == "rtt_scale" else 1.0)

    Y, X = np.meshgrid(ys, xs, indexing="ij")
    pts = list(zip(X.ravel(), Y.ravel()))
    B, L = len(pts), network.n_links
    # the last two windows of the output grid of a single run (simulate.output_grid: k dt, k = 0, 1, ..., and
    # t_end), so that a point run on its own and a point of the lock-step kernel are sampled at the same times
    # (before, arange from t_end - 2 window could drop t_end by round-off: 1.0 + 100 x 0.01 > 2.0)
    eps = 1e-9 * t_end
    k = np.arange(max(math.floor((t_end - 2 * window - eps) / dt), 0), math.floor(t_end / dt + 0.5) + 1)
    t_eval = k * dt
    t_eval = t_eval[(t_eval <= t_end) & (t_eval >= t_end - 2 * window - eps)]
    if t_eval.size == 0 or t_eval[-1] < t_end:
        t_eval = np.append(t_eval, t_end)
    swing = np.full((B, L), np.nan)
    qmean = np.full((B, L), np.nan)
    rate = np.full(B, np.nan)
    # the rates' swing of the flows crossing a queue held at a bound (NaN: no such queue, or not settled anyway)
    held_swing = np.full(B, np.nan)
    link_flows = np.zeros((L, network.n_flows), bool)
    link_flows[network.arrays.pair_link, network.arrays.pair_flow] = True
    # each point's queue bounds (packets, (B, L)): the buffers, or less where the model's queue management drops
    # everything above a level (RED's max_th, models.loss), so that a queue held there counts as held
    bound_of = {}  # by the point's parameter values (the RTT scale does not move a bound)

    def bound_at(xv, yv):
        key = tuple(v for k, v in ((x_name, xv), (y_name, yv)) if k != "rtt_scale")
        if key not in bound_of:
            bound_of[key] = np.broadcast_to(np.asarray(m.queue_bound_pkts(network, params_at(xv, yv)), float), (L,))
        return bound_of[key]
    bounds = np.array([bound_at(xv, yv) for xv, yv in pts]).reshape(B, L)
    status = np.array(["interrupted"] * B, dtype=object)
    n_steps = np.zeros(B, dtype=np.int64)
    overlap = bool(overlap) and engine == "numba"
    solver = ("adaptive RK45 (Dormand-Prince 5(4)), " + (
        f"lock-step groups of {_lanes_width(m, network, base, t_end, past)} points of one RTT scale, flow states/link "
        "states/queues integrated, steps "
        + ("may exceed the smallest delay (delayed values inside a step corrected iteratively)" if overlap
           else "never longer than the smallest delay")
        + ("; steps end where a queue's kink reaches the flows" if kinks else "") if engine == "numba"
        else "one run per point, steps never longer than the smallest delay"))
    settings = dict(model=m.name, scenario=network.name, x_name=x_name, y_name=y_name, rtol=rtol,
                    engine=engine if engine == "numba" else ("numpy" if point_engine == "numpy" else "auto (per point)"),
                    t_end_s=t_end, window_s=window, sample_dt_s=dt, params=str(base.as_dict()), solver=solver,
                    past=past, load_rtt=load_rtt)
    todo = np.arange(B)
    if previous is not None:
        # a map stored before the readings were recorded ran the defaults (silent, current)
        stored = {"past": "silent", "load_rtt": "current", **previous.attrs}
        same = (np.array_equal(previous["x"].values, xs) and np.array_equal(previous["y"].values, ys)
                and all(str(stored.get(k)) == str(v) for k, v in settings.items()))
        check(same, "previous", "a map of other settings", "a map of the same grid, model, scenario and settings")
        # a map stored before the held-queue test cannot say whether its flat queues had settled flows
        check("held_flow_rate_swing_pps" in previous, "previous", "a map without held_flow_rate_swing_pps",
              "a map of this version (maps stored before the rates of flows at a held queue were checked are "
              "recomputed)")
        kept = previous["status"].values.reshape(-1).astype(str) != "interrupted"
        swing[kept] = previous["queue_swing_pkts"].values.reshape(B, L)[kept]
        qmean[kept] = previous["queue_mean_pkts"].values.reshape(B, L)[kept]
        rate[kept] = previous["swing_growth_rate_per_s"].values.reshape(-1)[kept]
        held_swing[kept] = previous["held_flow_rate_swing_pps"].values.reshape(-1)[kept]
        status[kept] = previous["status"].values.reshape(-1)[kept]
        n_steps[kept] = previous["n_steps"].values.reshape(-1)[kept]
        todo = np.flatnonzero(~kept)
    def build():
        ok = status == "success"
        flat = ok & np.all(swing < thr, axis=1)
        changing = flat & (held_swing * window >= thr)  # NaN (no held queue) compares False
        stable = flat & ~changing
        regime = classify_regime(ok, stable, rate, window, ratio, changing)
        shape = (ys.size, xs.size)
        ds = xr.Dataset(
            {"stable": (("y", "x"), stable.reshape(shape), {"long_name": "settled (see attrs verdict)"}),
             "regime": (("y", "x"), regime.reshape(shape), {
                 "long_name": "dynamic regime of the simulated point", "flag_values": np.array(list(REGIMES), np.int8),
                 "flag_meanings": " ".join(REGIMES.values())}),
             "status": (("y", "x"), status.reshape(shape).astype("U16")),  # room for any status
             "n_steps": (("y", "x"), n_steps.reshape(shape)),
             "swing_growth_rate_per_s": (("y", "x"), rate.reshape(shape), {
                 "units": "1/s", "long_name": "ln(swing over the last window / swing over the window before) / window, "
                                             "largest swing over the links; NaN without two windows or where a swing "
                                             "is below max(1e-6, 10 rtol max(1, |mean queue|)) packet (not resolved)"}),
             "held_flow_rate_swing_pps": (("y", "x"), held_swing.reshape(shape), {
                 "units": "packets/s", "long_name": "largest peak-to-peak swing over the last window of the rate of a "
                                                   "flow crossing a link whose queue stayed within the threshold of "
                                                   "a bound (empty or full); NaN where no queue did (or the queues "
                                                   "were not flat)"}),
             "queue_swing_pkts": (("y", "x", "link"), swing.reshape(shape + (L,)), {"units": "packets"}),
             "queue_mean_pkts": (("y", "x", "link"), qmean.reshape(shape + (L,)), {"units": "packets"})},
            coords={"x": xs, "y": ys, "link": [lk.name for lk in network.links]})
        ds["x"].attrs.update(long_name=x_name, units=_unit(x_name) if x_name != "rtt_scale" else "-")
        ds["y"].attrs.update(long_name=y_name, units=_unit(y_name) if y_name != "rtt_scale" else "-")
        ds.attrs.update(
            **settings, swing_threshold_pkts=thr,
            verdict=(f"settled: run succeeded and every link's queue swings < {thr:g} packet(s) peak to peak over the "
                     f"last {window:g} s of {t_end:g} s; a queue held within {thr:g} packet(s) of empty or full also "
                     f"needs its flows' rates to move < {thr / window:g} packets/s"),
            regime_rule=(f"settled as in verdict; otherwise decaying (not settled) when the largest swing over the "
                         f"last {window:g} s is below {ratio:g} x the one over the {window:g} s before, else growing "
                         "or limit cycle; queue at a bound with the rates still changing when only the held-queue "
                         "test failed (e.g. a link not filled yet); not classified when that ratio was not measured"),
            decay_ratio=ratio,
            packet_bytes=network.packet_bytes, wall_s=time.perf_counter() - wall0,
            n_interrupted=int((status == "interrupted").sum()), n_run=int(todo.size))
        if engine_note is not None:
            ds.attrs["engine_note"] = engine_note
        if engine == "numba":
            from .dde.engine import lanes_kernel_info
            info = lanes_kernel_info() if todo_run[0] else {}  # how the lock-step kernel was obtained
            ds.attrs["kernel"] = ", ".join(f"{k}={v}" for k, v in info.items()) or "not run"
        return ds

    last_save = [time.perf_counter()]
    todo_run = [False]  # a lock-step batch ran in this call

    def finished_some(force=False):
        """Hand the map so far to ``on_partial`` (at most every ``partial_every_s`` seconds of wall time)."""
        if on_partial is not None and (force or time.perf_counter() - last_save[0] >= partial_every_s):
            on_partial(build())
            last_save[0] = time.perf_counter()

    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=B, initial=B - todo.size, unit="point", desc=f"{network.name}: map", leave=False)
    try:
        if engine == "numba":
            from .dde.engine import solve_adaptive_batch
            scales = sorted({scale_at(xv, yv) for xv, yv in pts})
            systems = [NetworkSystem(m, network.scaled(rtt_scale=s), base, t_end, past=past, load_rtt=load_rtt)
                       for s in scales]
            top = bounds.max(axis=0)
            if not np.array_equal(top, systems[0].a.buffer_pkts):
                # the points differ in their queues' bounds (a map over RED's max_th): the lock-step kernel holds
                # every lane's queue at one bound per link, so it gets the largest; a point with a lower one lets
                # its queue pass that (above it RED drops everything) as every point did before the bound
                for sy in systems:
                    sy.set_queue_bound(top)
                bounds[:] = top  # the held-queue test reads the bound the kernel held
            member_system = np.array([scales.index(scale_at(xv, yv)) for xv, yv in pts])
            pset = {}  # the parameter object of each distinct parameter set, made once

            def params_of(xv, yv):
                key = tuple(v for k, v in ((x_name, xv), (y_name, yv)) if k != "rtt_scale")
                if key not in pset:
                    pset[key] = params_at(xv, yv)
                return pset[key]
            per = [params_of(xv, yv) for xv, yv in pts]
            iq = systems[0].layout["queue"].sl
            n_fc = sum(b.size for k, b in systems[0].layout.items() if k.startswith("flow:"))  # flow blocks first
            comps = np.r_[np.arange(n_fc), np.arange(iq.start, iq.stop)]
            # lock-step groups fixed over the whole grid: the points of one RTT scale, LANES at a time in grid
            # order (blocks of LANES; a model of narrower groups, codegen._lanes_count, splits each block).  A
            # kernel call runs whole groups, and a group's result depends only on its members, so the
            # numbers do not depend on how the calls are cut (by time, below) nor on an interruption: a rerun
            # with ``previous`` recomputes exactly the groups not finished and gives the uninterrupted numbers.
            from .dde.aot import LANES
            from .dde.engine import _n_threads
            todo_mask = np.zeros(B, dtype=bool)
            todo_mask[todo] = True
            blocks = []
            for i in range(len(systems)):
                idx = np.flatnonzero(member_system == i)
                blocks += [idx[g0:g0 + LANES] for g0 in range(0, idx.size, LANES)]
            blocks = [blk for blk in blocks if todo_mask[blk].any()]
            # calls of whole groups, sized so that one takes about ``partial_every_s`` / 2 of wall time (measured
            # and adapted call by call; at most ``chunk`` points): a killed run loses about that much work more
            # than what ``on_partial`` last stored
            nt = _n_threads()
            cap = max(1, -(-chunk // LANES))  # groups per call at most
            per_call = min(cap, nt)
            # one output buffer for every call (read before the next): a fresh one per call (up to ~80 MB) cost
            # its page faults each time (docs/notes/mapbuf.md: 3-12 % of a 100 x 100 Symbiosis map's CPU time)
            obuf = np.empty((min(cap, len(blocks)) * LANES + 1, t_eval.size, comps.size))
            k_last = int(np.searchsorted(_last_window(t_eval, t_end, window), True))  # its first sample (sorted)
            t_last, act_last = t_eval[k_last:], {}
            i0 = 0
            while i0 < len(blocks):
                sl = np.concatenate(blocks[i0:i0 + per_call])
                tc = time.perf_counter()
                out, st, cnt = solve_adaptive_batch(
                    systems, member_system[sl], [per[b] for b in sl], t_end, rtol=rtol, atol=atol,
                    max_history_gib=max_history_gib, out=obuf,
                    t_eval=t_eval, components=comps, dynamics_only=True, overlap=overlap, kinks=kinks)
                todo_run[0] = True
                qs = out[..., n_fc:]
                swing[sl], qmean[sl], rate[sl] = _window_stats(t_eval, qs, t_end, window, rtol)
                held = _held_links(qs, t_eval, t_end, window, bounds[sl], thr)
                fsw = np.zeros((sl.size, link_flows.shape[1]))  # the flows' rate swings, where ``done``
                done = np.zeros(sl.size, bool)
                for j, b in enumerate(sl):  # the rates only where a flat queue sat at a bound
                    if st[j].value == "success" and held[j].any() and (swing[b] < thr).all():
                        i_s = member_system[b]
                        sysm = systems[i_s]
                        if i_s not in act_last:  # the flows' activity over the last window, once per system
                            act_last[i_s] = active_mask(sysm.a, t_last)
                        # the last window's samples only (the swing reads no other; the rates are per sample): the
                        # main thread's CPU time in a 100 x 100 XCP map, whose points all hold the queue empty,
                        # 1.5-1.9 s -> 1.1-1.3 s (time.thread_time, 4 runs each); the flow blocks lead the layout, so
                        # the sampled columns index like the state's
                        r = flow_rates(sysm, flow_values(sysm, out[j, k_last:]), qs[j, k_last:], act_last[i_s], per[b])
                        # over time in a copy with time last: NumPy's max over the first axis of a (time, 4) array
                        # took 65 us, over the last one of its transpose 6 us (0.6 s of a 100 x 100 XCP map)
                        r = np.ascontiguousarray(r.T)
                        fsw[j], done[j] = r.max(axis=1) - r.min(axis=1), True
                held_swing[sl[done]] = _held_rate_swing(fsw[done], held[done], link_flows)
                status[sl] = [s.value for s in st]
                n_steps[sl] = cnt[:, 0]
                i0 += per_call
                if bar is not None:
                    bar.update(int(todo_mask[sl].sum()))
                todo_mask[sl] = False
                finished_some()
                per_group = (time.perf_counter() - tc) / per_call
                want = int(0.5 * partial_every_s / max(per_group, 1e-9))
                per_call = min(cap, max(nt, want - want % nt))  # a multiple of the threads where possible
        else:
            for b in todo:
                xv, yv = pts[b]
                tr = simulate(network.scaled(rtt_scale=scale_at(xv, yv)), m, params_at(xv, yv), t_end_s=t_end,
                              output_dt_s=dt, rtol=rtol, atol=atol, engine=point_engine,
                              max_history_gib=max_history_gib, past=past, load_rtt=load_rtt)
                if tr.status.value == "interrupted":  # Ctrl-C inside the run: the solver kept it, stop here
                    break
                swing[b], qmean[b], rate[b] = _window_stats(tr.t_s, tr.queue_pkts, t_end, window, rtol)
                held = _held_links(tr.queue_pkts, tr.t_s, t_end, window, bounds[b], thr)
                if tr.ok and held.any() and (swing[b] < thr).all():
                    held_swing[b] = _held_rate_swing(_rate_swing(tr.t_s, tr.rate_pps, t_end, window), held, link_flows)
                status[b], n_steps[b] = tr.status.value, tr.solver["n_steps"]
                if bar is not None:
                    bar.update(1)
                finished_some()
    except KeyboardInterrupt:  # finished points are kept; the rest stay "interrupted"
        pass
    finally:
        if bar is not None:
            bar.close()
    return build()


def _lanes_width(m, network, base, t_end, past="silent"):
    """Members per lock-step group of the model's lanes kernel (:func:`ecocc.dde.codegen._lanes_count`)."""
    from .dde import codegen
    return codegen.generate(NetworkSystem(m, network, base, t_end, past=past)).lanes


def lanes_gap(model, network, *, load_rtt="current", params=None):
    """Why the lock-step map kernel cannot run ``model`` on ``network`` with the reading ``load_rtt``, or None.

    The kernel's own gaps (:func:`ecocc.dde.engine._unsupported`: a model the generated kernels do not serve,
    forward delays), and ``load_rtt="sent"`` where it changes the equations: the kernel reads delayed rates with
    the current queueing delay only, so it refuses "sent" for a model whose delayed load reads the queueing delay
    (derived from the model's laws, :func:`ecocc.dde.codegen.sent_differs`: Reno with drop-tail or RED, Symbiosis
    with a queue-dependent load, ...) and runs it elsewhere (AECP, CLTCP, PE-TCP, Symbiosis' default load:
    the two readings are the same equations there).  ``past`` is no gap: the kernel takes the systems' start
    times, which carry it (:func:`ecocc.system.effective_start`).

    Parameters
    ----------
    model : str or NetworkModel
    network : Network
    load_rtt : {"current", "sent"}, optional
    params : dict or ModelParams or None, optional
        The model's parameters or overrides of its defaults (their options select the laws, e.g. Reno's
        ``aqm``); None: the defaults.

    Returns
    -------
    str or None
        One sentence (what :func:`simulate_map` and ``ecocc sim-map`` print as the reason for one run per
        point), or None.
    """
    from .dde import codegen
    from .dde.engine import _unsupported, _variant_gap
    from .system import check_load_rtt
    m = get_model(model)
    why = _unsupported(m, network, "lanes")
    if why is not None:
        return why
    if check_load_rtt(load_rtt) == "sent":
        P = m.make_params(None, **params) if isinstance(params, dict) else m.make_params(params)
        sysm = NetworkSystem(m, network, P, 1.0, load_rtt="sent")
        if codegen.supported(sysm) is None:
            return _variant_gap(sysm, "lanes")
    return None


__all__ = ["simulate_batch", "simulate_map", "lanes_gap", "BatchParams", "MAP_AXES_NUMBA", "REGIMES",
           "classify_regime"]
