"""Trajectories: named series with their inputs and status."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np

from .dde.adaptive import Status
from .models.base import NUMPY_OPS
from .units import pps_to_mbps


def jain_index(x, axis=-1):
    """Jain's fairness index ``(sum x)^2 / (n sum x^2)``.

    Parameters
    ----------
    x : array_like
        Rates (any unit; NaN entries are left out).
    axis : int
        The axis of the flows.

    Returns
    -------
    numpy.ndarray or float
        In ``[1/n, 1]``; NaN where no rate is positive.
    """
    x = np.asarray(x, dtype=float)
    n = np.sum(~np.isnan(x), axis=axis)
    s1 = np.nansum(x, axis=axis)
    s2 = np.nansum(x * x, axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((n > 0) & (s2 > 0), s1 * s1 / (n * s2), np.nan)


def flow_values(sysm, Y):
    """The flow variables of a single-model system in their own units (log states exponentiated).

    Parameters
    ----------
    sysm : ecocc.system.NetworkSystem
        The system whose layout ``Y``'s columns follow (the flow blocks at least: they come first).
    Y : numpy.ndarray
        States, ``(time, component)``.

    Returns
    -------
    dict
        Flow variable name -> ``(time, flow)`` array.
    """
    lay = sysm.layout
    return {v: (np.exp(Y[:, lay["flow:" + v].sl]) if lay["flow:" + v].log else Y[:, lay["flow:" + v].sl])
            for v in getattr(sysm.model, "flow_states", ())}


def active_mask(a, t):
    """Whether each flow is sending at each time (``start_s <= t < stop_s``).

    Parameters
    ----------
    a : network arrays
        ``start_s``, ``stop_s`` per flow, seconds.
    t : array_like
        Times, seconds.

    Returns
    -------
    numpy.ndarray
        Bool, ``(time, flow)``.
    """
    t = np.asarray(t, dtype=float)
    return (a.start_s[None, :] <= t[:, None]) & (t[:, None] < a.stop_s[None, :])


def flow_rates(sysm, fv, q, act, P=None):
    """Sending rate of every flow, packets/s, ``(time, flow)``, by the model's ``flow_rate``.

    Parameters
    ----------
    sysm : ecocc.system.NetworkSystem
        A single-model system.
    fv : dict
        :func:`flow_values`.
    q : numpy.ndarray
        Queues, packets, ``(time, link)``.
    act : numpy.ndarray
        :func:`active_mask`.
    P : ModelParams, optional
        Parameters other than the system's (a map point's); None: ``sysm.P``.

    Returns
    -------
    numpy.ndarray
        Packets/s, ``(time, flow)``; 0 where a flow is not active.
    """
    st = sysm.st if P is None else sysm.model.flow_static(sysm.net, P)
    qdelay = sysm.a.flow_sum_over_route(q / sysm.C)  # queueing delay along each route, seconds
    return sysm.model.flow_rate(NUMPY_OPS, fv, qdelay, sysm.P if P is None else P, st) * act


@dataclass
class Trajectory:
    """A simulated run.

    Series are sampled at ``t_s`` (seconds): ``rate_pps`` (time x flow,
    zero while a flow is inactive), ``queue_pkts`` (time x link),
    ``lost_pkts``, ``arrived_pkts``, ``departed_pkts`` (cumulative, time x
    link), ``sent_pkts`` (cumulative, time x flow), and the model's own
    states in ``flow_vars`` / ``link_vars`` (natural units).
    """

    name: str
    model: str
    params: dict
    t_s: np.ndarray
    rate_pps: np.ndarray
    queue_pkts: np.ndarray
    lost_pkts: np.ndarray
    arrived_pkts: np.ndarray
    departed_pkts: np.ndarray
    sent_pkts: np.ndarray
    queue_area_pkt_s: np.ndarray
    flow_vars: dict
    link_vars: dict
    flow_names: list
    link_names: list
    capacity_pps: np.ndarray
    active: np.ndarray
    status: Status
    message: str
    solver: dict = field(default_factory=dict)
    packet_bytes: float = 1000.0
    summary_window_s: float = 1.0
    equilibrium: dict | None = None
    #: unresponsive cross traffic offered to each link (time x link, packets/s); None when not recorded
    cross_pps: np.ndarray | None = None

    @property
    def ok(self) -> bool:
        return self.status == Status.SUCCESS

    @classmethod
    def from_solution(cls, sol, sysm, name, summary_window_s):
        m, net = sysm.model, sysm.net
        Y = sol.y
        t = sol.t
        lay = sysm.layout
        fv = flow_values(sysm, Y)
        lv = {v: (np.exp(Y[:, lay["link:" + v].sl]) if lay["link:" + v].log else Y[:, lay["link:" + v].sl])
              for v in getattr(m, "link_states", ())}
        q = Y[:, lay["queue"].sl]
        act = active_mask(sysm.a, t)
        if hasattr(sysm, "trajectory_parts"):  # a mixed-protocol composite (ecocc.mixed): series per member
            model_name, params, fv, lv, rate = sysm.trajectory_parts(Y, t)
            eq = None
        else:
            model_name, params = m.name, sysm.P.as_dict()
            rate = flow_rates(sysm, fv, q, act)
            # computed on first read of Trajectory.equilibrium (see _DeferredEquilibrium)
            eq = _DeferredEquilibrium(m, net, sysm.P, (act[-1] if len(t) else np.ones(net.n_flows, bool)).copy())
        return cls(name=name, model=model_name, params=params, t_s=t, rate_pps=rate, queue_pkts=q,
                   lost_pkts=Y[:, lay["lost"].sl], arrived_pkts=Y[:, lay["arrived"].sl],
                   departed_pkts=Y[:, lay["departed"].sl], sent_pkts=Y[:, lay["sent"].sl],
                   queue_area_pkt_s=Y[:, lay["queue_area"].sl],
                   flow_vars=fv, link_vars=lv, flow_names=[f.name for f in net.flows],
                   link_names=[lk.name for lk in net.links], capacity_pps=sysm.C.copy(), active=act,
                   status=sol.status, message=sol.message,
                   solver=dict(method=sol.method, n_steps=sol.n_steps, n_rejected=sol.n_rejected, nfev=sol.nfev,
                               n_clamp_events=sol.n_clamp_events, wall_s=sol.wall_s, t_reached_s=sol.t_reached,
                               **{k: v for k, v in sol.settings.items() if k != "atol"}),
                   packet_bytes=net.packet_bytes, summary_window_s=summary_window_s, equilibrium=eq,
                   cross_pps=np.asarray(sysm.cross(t), dtype=float).reshape(t.size, -1))

    # -- derived series ------------------------------------------------------
    @property
    def rate_mbps(self):
        return pps_to_mbps(self.rate_pps, self.packet_bytes)

    def jain(self):
        """Jain's index over the active flows at each sample.

        Returns
        -------
        numpy.ndarray
            One value per sample time (NaN when no flow is active).
        """
        x = np.where(self.active, self.rate_pps, np.nan)
        return jain_index(x, axis=1)

    def utilization(self, bin_s: float = 1.0):
        """Per-link utilization averaged over bins (exact: from the cumulative departures).

        Parameters
        ----------
        bin_s : float
            Bin length in seconds.

        Returns
        -------
        t_mid : numpy.ndarray
            Bin centres (s).
        u : numpy.ndarray
            Utilization (time x link), departures over capacity.
        """
        edges = np.arange(self.t_s[0], self.t_s[-1] + 1e-12, bin_s)
        if edges.size < 2:
            edges = np.array([self.t_s[0], self.t_s[-1]])
        D = np.array([np.interp(edges, self.t_s, self.departed_pkts[:, j]) for j in range(len(self.link_names))]).T
        u = np.diff(D, axis=0) / (np.diff(edges)[:, None] * self.capacity_pps[None, :])
        return 0.5 * (edges[1:] + edges[:-1]), u

    # -- summary ---------------------------------------------------------------
    def window(self, window_s: float | None = None):
        """The final window ``[t_end - window_s, t_end]`` the summary averages over, clipped to the run.

        Parameters
        ----------
        window_s : float, optional
            Window length in seconds (default: ``summary_window_s``).

        Returns
        -------
        tuple of float
            ``(t0, t1)`` in seconds.
        """
        w = self.summary_window_s if window_s is None else float(window_s)
        t1 = float(self.t_s[-1])
        return max(float(self.t_s[0]), t1 - w), t1

    def window_change(self, series, t0: float, t1: float):
        """How much each column of a cumulative series (a counter: sent, arrived, lost, ...) grew from ``t0`` to
        ``t1``, interpolated linearly between samples.

        Parameters
        ----------
        series : numpy.ndarray
            Shape ``(time, columns)``, sampled at :attr:`t_s` (packets, or packet-seconds for the queue area).
        t0, t1 : float
            The window (s).

        Returns
        -------
        numpy.ndarray
            One value per column, in the series' units.
        """
        return np.array([np.interp(t1, self.t_s, series[:, j]) - np.interp(t0, self.t_s, series[:, j])
                         for j in range(series.shape[1])])

    def summary(self, window_s: float | None = None) -> dict:
        """Means over the final window ``[t_end - window_s, t_end]``.

        Parameters
        ----------
        window_s : float, optional
            Window length in seconds (default: ``summary_window_s``).

        Returns
        -------
        dict
            JSON-able: per flow the mean rate (packets/s and Mbit/s at ``packet_bytes``; ``None`` for a flow
            not active in the window), per link mean queue, utilization and loss, Jain's index of the flows
            active at the end, the equilibrium of those flows where the model has one, status and message.
            Non-finite numbers are ``None``.
        """
        t0, t1 = self.window(window_s)

        def delta(series):
            return self.window_change(series, t0, t1)

        dt = max(t1 - t0, 1e-300)
        mean_rate = delta(self.sent_pkts) / dt
        mean_q = delta(self.queue_area_pkt_s) / dt if t1 > t0 else self.queue_pkts[-1]
        util = delta(self.departed_pkts) / (self.capacity_pps * dt)
        lost = delta(self.lost_pkts)
        arrived = delta(self.arrived_pkts)
        active_end = self.active[-1]
        in_win = (self.t_s >= t0) & (self.t_s <= t1)
        flows = []
        for j, nm in enumerate(self.flow_names):
            act_w = bool(self.active[in_win, j].any()) if in_win.any() else bool(active_end[j])
            # a flow that has left (or not started) has no rate in the window: null, not "0.0000 Mbps"
            d = {"name": nm, "active_in_window": act_w, "active_at_end": bool(active_end[j]),
                 "mean_rate_pps": float(mean_rate[j]) if act_w else None,
                 "mean_rate_mbps": float(pps_to_mbps(mean_rate[j], self.packet_bytes)) if act_w else None,
                 "final_rate_pps": float(self.rate_pps[-1, j]) if active_end[j] else None}
            if self.equilibrium and "rate_pps" in self.equilibrium and active_end[j]:
                # the equilibrium of the flows active at the end (see _equilibrium_at_end); none for the others
                d["equilibrium_rate_pps"] = float(self.equilibrium["rate_pps"][j])
            flows.append(d)
        links = []
        for j, nm in enumerate(self.link_names):
            d = {"name": nm, "mean_queue_pkts": float(mean_q[j]), "final_queue_pkts": float(self.queue_pkts[-1, j]),
                 "max_queue_pkts": float(self.queue_pkts[:, j].max()),
                 "utilization": float(util[j]), "lost_pkts": float(lost[j]),
                 "loss_ratio": float(lost[j] / arrived[j]) if arrived[j] > 0 else 0.0,
                 "capacity_pps": float(self.capacity_pps[j])}
            if self.equilibrium and "queue_pkts" in self.equilibrium:
                d["equilibrium_queue_pkts"] = float(self.equilibrium["queue_pkts"][j])
            links.append(d)
        act_rates = mean_rate[active_end]
        return _jsonable({
            "scenario": self.name, "model": self.model, "params": _jsonable(self.params),
            "window_s": [t0, t1], "packet_bytes": self.packet_bytes,
            "flows": flows, "links": links,
            "jain_index": float(jain_index(act_rates)) if act_rates.size else None,
            "status": self.status.value, "message": self.message,
            "solver": _jsonable(self.solver),
            "equilibrium_source": (self.equilibrium or {}).get("source"),
        })

    # -- export ---------------------------------------------------------------
    def to_xarray(self):
        """The run as a Dataset.

        Returns
        -------
        xarray.Dataset
            ``rate``, ``sent``, ``active`` on (time, flow); ``queue``, ``lost``, ``arrived``, ``departed``
            on (time, link); ``capacity``, ``jain``; the model's states; units in ``attrs``.
        """
        import xarray as xr
        ds = xr.Dataset(
            {
                "rate": (("time", "flow"), self.rate_pps, {"units": "packets/s"}),
                "sent": (("time", "flow"), self.sent_pkts, {"units": "packets", "long_name": "cumulative sent"}),
                "active": (("time", "flow"), self.active.astype(np.int8)),
                "queue": (("time", "link"), self.queue_pkts, {"units": "packets"}),
                "lost": (("time", "link"), self.lost_pkts, {"units": "packets", "long_name": "cumulative lost"}),
                "arrived": (("time", "link"), self.arrived_pkts, {"units": "packets"}),
                "departed": (("time", "link"), self.departed_pkts, {"units": "packets"}),
                "capacity": (("link",), self.capacity_pps, {"units": "packets/s"}),
                "jain": (("time",), self.jain()),
            },
            coords={"time": ("time", self.t_s, {"units": "s"}), "flow": self.flow_names, "link": self.link_names},
            attrs={"scenario": self.name, "model": self.model, "params": json.dumps(_jsonable(self.params)),
                   "status": self.status.value, "message": self.message, "packet_bytes": self.packet_bytes,
                   "solver": json.dumps(_jsonable(self.solver))},
        )
        for v, arr in self.flow_vars.items():
            ds[f"flow_{v}"] = (("time", "flow"), arr)
        for v, arr in self.link_vars.items():
            ds[f"link_{v}"] = (("time", "link"), arr)
        return ds

    def to_netcdf(self, path):
        """Write :meth:`to_xarray` to NetCDF (h5netcdf).

        Parameters
        ----------
        path : str or path-like
            The ``.nc`` file to write (replaced if it exists).
        """
        self.to_xarray().to_netcdf(path, engine="h5netcdf")

    def to_csv(self, flows_path, links_path):
        """Two wide CSV files: per-flow rates and per-link queues.

        Parameters
        ----------
        flows_path : path
            ``time_s`` and one ``<flow>_rate_pps`` column per flow.
        links_path : path
            ``time_s`` and ``<link>_queue_pkts``, ``<link>_lost_pkts`` per link.
        """
        hdr = "time_s," + ",".join(f"{n}_rate_pps" for n in self.flow_names)
        np.savetxt(flows_path, np.column_stack([self.t_s, self.rate_pps]), delimiter=",", header=hdr, comments="")
        hdr = "time_s," + ",".join(f"{n}_queue_pkts,{n}_lost_pkts" for n in self.link_names)
        cols = [self.t_s]
        for j in range(len(self.link_names)):
            cols += [self.queue_pkts[:, j], self.lost_pkts[:, j]]
        np.savetxt(links_path, np.column_stack(cols), delimiter=",", header=hdr, comments="")

    def plot(self, ax=None, **kwargs):
        """Rates, queues and Jain's index over time; see :func:`ecocc.plotting.plot_trajectory` (same keywords).

        Parameters
        ----------
        ax : matplotlib axes, optional
            Where to draw (see :func:`ecocc.plotting.plot_trajectory`).
        **kwargs
            Passed to :func:`ecocc.plotting.plot_trajectory`.

        Returns
        -------
        ecocc.plotting.TrajectoryPlot
            The figure, the axes by panel and the artists drawn.
        """
        from .plotting import plot_trajectory
        return plot_trajectory(self, ax=ax, **kwargs)


class _DeferredEquilibrium:
    """The arguments of :func:`_equilibrium_at_end`, evaluated on the first read of
    :attr:`Trajectory.equilibrium`: several models' equilibria solve for a root with SciPy, whose import
    (``scipy.optimize``, 0.2-0.3 s) would otherwise be most of a short run's process."""

    __slots__ = ("args",)

    def __init__(self, *args):
        self.args = args


def _get_equilibrium(self):
    v = self.__dict__.get("_equilibrium")
    if isinstance(v, _DeferredEquilibrium):
        v = self.__dict__["_equilibrium"] = _equilibrium_at_end(*v.args)
    return v


def _set_equilibrium(self, value):
    self.__dict__["_equilibrium"] = value


def _getstate(self):
    _get_equilibrium(self)  # a pickled trajectory carries the value, not the model and network
    return dict(self.__dict__)


# a property over the dataclass field (its __init__ assigns through the setter; the default stays None)
Trajectory.equilibrium = property(_get_equilibrium, _set_equilibrium, doc=(
    "The model's analytic equilibrium for the flows active at the end of the run (dict), None where the model "
    "has none; computed on first read."))
Trajectory.__getstate__ = _getstate


def _equilibrium_at_end(m, net, P, active_end):
    """The model's analytic equilibrium for the flows active at the end of the run (the ones a final-window
    summary is compared with): the whole network when every flow is active, else the network without the
    flows that have left or not started (their entries NaN, and ``source`` says so); None when no flow is
    active or the model has no closed form.  Failures are reported in ``{"error": ...}``, not raised."""
    active_end = np.asarray(active_end, dtype=bool)
    if not active_end.any():
        return None
    try:
        if active_end.all():
            return m.equilibrium(net, P)
        keep = [f for f, a in zip(net.flows, active_end) if a]
        used = {lk for f in keep for lk in f.route}
        sub = net.replace(flows=tuple(keep))
        eq = m.equilibrium(sub, P)
        if eq is None:
            return None
        out = dict(eq)
        if "rate_pps" in eq:
            rate = np.full(net.n_flows, np.nan)
            rate[active_end] = np.asarray(eq["rate_pps"], dtype=float)
            out["rate_pps"] = rate
        gone = [f.name for f, a in zip(net.flows, active_end) if not a]
        out["source"] = f"{eq.get('source', '')} (flows active at the end only; without {', '.join(gone)})"
        out["links_used"] = sorted(used)
        return out
    except Exception as exc:  # an equilibrium that cannot be computed is reported, not fatal
        return {"error": str(exc)}


def json_dumps(obj, **kw) -> str:
    """Strict JSON of ``obj``, numpy scalars and arrays included.

    Parameters
    ----------
    obj : object
        Nested dicts, lists, numbers, arrays.
    **kw
        Passed to :func:`json.dumps` (e.g. ``indent``).

    Returns
    -------
    str
        Every non-finite number is ``null``, the same in every file and output of ecocc (JSON has no NaN or
        infinity).
    """
    return json.dumps(_jsonable(obj), allow_nan=False, **kw)


def _jsonable(obj):
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (np.floating, float)):
        v = float(obj)
        return v if math.isfinite(v) else None  # strict JSON has no NaN/inf
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, Status):
        return obj.value
    return obj
