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
from .results import Trajectory
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
        return {f: getattr(self, f) for f in self._fields}


def _stack(arrs):
    arrs = [np.asarray(a, dtype=float) for a in arrs]
    if all(a.shape == arrs[0].shape and np.array_equal(a, arrs[0]) for a in arrs):
        return arrs[0]
    return np.stack(arrs)


def simulate_batch(network: Network, model="aecp", params_list=None, *, rtt_scale=None, t_end_s: float,
                   step_s: float, output_dt_s: float | None = None, engine: str = "numpy"):
    """Simulate ``B`` members of a parameter sweep in one fixed-step integration.

    Parameters
    ----------
    network : Network
    model : str or NetworkModel
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
    engine : {"numpy", "numba"}
        ``"numba"`` runs the compiled RK4 kernel of :mod:`ecocc.dde.kernels`
        (members in parallel; AECP/CLTCP only, numba required).

    Returns
    -------
    xarray.Dataset
        Dims ``member``, ``time``, ``flow``, ``link``: the variables of
        :meth:`Trajectory.to_xarray` for every member, plus ``status`` and
        ``t_failed_s`` per member.  Coordinates: every parameter that varies (per member),
        ``rtt_scale``.  ``attrs`` hold the solver settings and wall time.
    """
    import xarray as xr

    from .dde.fixed import solve_fixed

    m = get_model(model)
    check(isinstance(network, Network), "network", type(network).__name__, "a Network")
    t_end = check_finite("t_end_s", t_end_s, positive=True)
    h = check_finite("step_s", step_s, positive=True)
    from .dde.engine import check_engine
    check_engine(engine, m, network)
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

    systems = [NetworkSystem(m, network.scaled(rtt_scale=s), P, t_end) for P, s in zip(members, scales)]
    Y0 = np.stack([s.initial_state() for s in systems])
    bs = NetworkSystem(m, network, members[0], t_end)  # structure (routing, layout) shared by all members
    bs.P = BatchParams(members)
    bs.st = {k: _stack([s.st[k] for s in systems]) for k in bs.st}
    bs.lst = {k: _stack([s.lst[k] for s in systems]) for k in bs.lst}
    bs.st_pair_flow = {k: _stack([s.st_pair_flow[k] for s in systems]) for k in bs.st_pair_flow}
    bs.lst_pair = {k: _stack([s.lst_pair[k] for s in systems]) for k in bs.lst_pair}
    bs.bwd = _stack([s.bwd for s in systems])
    bs.fwd = _stack([s.fwd for s in systems])
    bs.rtt_s = _stack([s.a.rtt_s for s in systems])
    if m.signal_uses_arrival:
        bs.arr_delays = _stack([s.arr_delays for s in systems])
    for i, lk in enumerate(bs.lookups):
        lk.delays = _stack([s.lookups[i].delays for s in systems])
    prob = bs.problem(y0=Y0)
    if engine == "numba":
        from .dde.engine import solve_fixed_aecp
        sol = solve_fixed_aecp(bs, t_end, h, y0=Y0, t_eval=t_eval)
    else:
        sol = solve_fixed(prob, t_end, h, t_eval=t_eval)

    member_status = sol.settings.get("member_status") or [sol.status.value] * B
    t_failed = np.asarray(sol.settings.get("member_t_failed_s") or [math.nan] * B, dtype=float)
    trs = []
    for b, sysm in enumerate(systems):
        st_b = Status(member_status[b]) if sol.status != Status.INTERRUPTED else Status.INTERRUPTED
        msg = sol.message if st_b != Status.FAILED else f"non-finite state at t = {t_failed[b]:.9g} s"
        sol_b = dataclasses.replace(sol, y=sol.y[:, b, :], status=st_b, message=msg)
        trs.append(Trajectory.from_solution(sol_b, sysm, name=network.name, summary_window_s=0.1 * t_end))
    # one dataset per member (Trajectory.to_xarray), stacked along "member"
    ds = xr.concat([t.to_xarray() for t in trs], dim="member", data_vars="all", coords="minimal",
                   compat="override", join="override", combine_attrs="drop")
    ds["capacity"] = ds["capacity"].isel(member=0)  # members share the links (only delays are scaled)
    ds["status"] = ("member", np.array(member_status, dtype=object))
    ds["t_failed_s"] = ("member", t_failed, {"units": "s"})
    coords = {"member": np.arange(B), "rtt_scale": ("member", np.asarray(scales, dtype=float))}
    for f in bs.P.varying:
        coords[f] = ("member", np.array([getattr(p, f) for p in members], dtype=float))
    attrs = {"model": m.name, "scenario": network.name, "solver": sol.method, "status": sol.status.value,
             "message": sol.message, "step_s": sol.settings["step_s"], "nfev": sol.nfev, "wall_s": sol.wall_s,
             "packet_bytes": network.packet_bytes}
    return ds.assign_coords(coords).assign_attrs(attrs)


__all__ = ["simulate_batch", "BatchParams"]
