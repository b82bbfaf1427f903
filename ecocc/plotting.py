"""Figures from result objects (never from inside solvers).

Plot functions follow matplotlib / python-control conventions: they take
``ax=`` (created when absent), pass keyword styling through to the artists,
and return the artists they drew.  Labels are words with units; use
:func:`param_label` for any parameter or metric name shown to a user.
"""
from __future__ import annotations

import textwrap
import warnings
from dataclasses import dataclass, field

import numpy as np

from .errors import InputError

# -- labels ----------------------------------------------------------------------------------------

#: words (with units) for model parameters, sweep axes and sweep metrics
PARAM_LABELS = {
    # CLTCP / AECP (001/004, eq. 2, 3, 43)
    "alpha_per_s": "source gain α (1/s)",
    "beta_per_s": "link gain β (1/s)",
    "T_s": "queue time constant T (s)",
    "q0_pkts": "target queue q0 (packets)",
    "r0_pps": "initial link rate factor r0 (packets/s)",
    # PE-TCP (000)
    "a_pps2": "additive increase a (packets/s²)",
    "b_per_s": "multiplicative gain b (1/s)",
    "delayed_feedback": "delayed feedback (yes/no)",
    # TCP Symbiosis (002)
    "epsilon_per_s": "intrinsic growth rate ε (1/s)",
    "gamma": "competition coefficient γ (1)",
    "available": "available-bandwidth estimate",
    "rate": "rate law",
    # Reno
    "aqm": "queue discipline",
    "red_min_th_pkts": "RED minimum threshold (packets)",
    "red_max_th_pkts": "RED maximum threshold (packets)",
    "red_p_max": "RED maximum drop probability (1)",
    # HighSpeed TCP (RFC 3649)
    "low_window_pkts": "HSTCP low window, Reno below it (packets)",
    "high_window_pkts": "HSTCP high window (packets)",
    "high_p": "HSTCP loss rate at the high window (1)",
    "high_decrease": "HSTCP decrease factor at the high window (1)",
    # Scalable TCP (Kelly 2003)
    "a_pkts_per_ack": "Scalable TCP increase per acknowledgement a (packets)",
    "b": "Scalable TCP decrease per loss event b (1)",
    # FAST TCP (Jin et al. 2004)
    "alpha_pkts": "FAST packets kept in the queues α (packets)",
    # XCP (Katabi et al. 2002)
    "alpha": "XCP gain on spare bandwidth α (1)",
    "beta": "XCP gain on the persistent queue β (1)",
    "shuffle": "XCP shuffled fraction of the traffic (1)",
    # axes that scale the network
    "rtt_scale": "RTT scale factor (1)",
    "capacity_scale": "capacity scale factor (1)",
    # sweep metrics (ecocc.sweeps.METRICS; final window, most loaded link)
    "utilization": "utilization of the most loaded link (1)",
    "mean_queue_pkts": "mean queue of the most loaded link (packets)",
    "jain_index": "Jain's index of raw rates, active flows (1)",
    "queue_p2p_pkts": "queue swing over the final window, peak to peak (packets)",
    "rate_p2p_rel": "aggregate-rate swing over the final window / capacity (1)",
    "t_efficiency_s": "time to reach 99 % of capacity (s)",
}

_UNIT_SUFFIXES = (("_per_s", "1/s"), ("_pps2", "packets/s²"), ("_pps", "packets/s"), ("_pkts", "packets"),
                  ("_mbps", "Mbps"), ("_ms", "ms"), ("_s", "s"))

#: display names of the registered models
MODEL_LABELS = {"aecp": "AECP", "cltcp": "CLTCP", "petcp": "PE-TCP", "reno": "TCP Reno (fluid)",
                "symbiosis": "TCP Symbiosis"}


def param_label(name: str) -> str:
    """Axis label in words, with units, for a parameter, sweep axis or metric name.

    Parameters
    ----------
    name : str
        An identifier such as ``"alpha_per_s"``, ``"rtt_scale"`` or
        ``"queue_p2p_pkts"``.

    Returns
    -------
    str
        For example ``"source gain α (1/s)"``.  Names not in
        :data:`PARAM_LABELS` are spelled out from their unit suffix
        (``"foo_bar_s"`` -> ``"foo bar (s)"``; no suffix -> ``"(1)"``).
    """
    name = str(name)
    if name in PARAM_LABELS:
        return PARAM_LABELS[name]
    for suffix, unit in _UNIT_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return f"{name[:-len(suffix)].replace('_', ' ')} ({unit})"
    return f"{name.replace('_', ' ')} (1)"


def model_label(name: str) -> str:
    """Return the display name of a model (``"petcp"`` -> ``"PE-TCP"``); unknown names are returned unchanged.

    Parameters
    ----------
    name : str
        A registry model name.

    Returns
    -------
    str
        Its entry in :data:`MODEL_LABELS`, else ``str(name)``.
    """
    return MODEL_LABELS.get(str(name), str(name))


# -- axes handling ----------------------------------------------------------------------------------

def _resolve_axes(ax, n, fig, figsize, what):
    """``n`` axes from ``ax`` (None, one Axes or a sequence) or the deprecated ``fig``.

    Returns ``(figure, list of axes, created)``.
    """
    import matplotlib.pyplot as plt
    from matplotlib.axes import Axes

    if fig is not None:
        warnings.warn(f"{what}: the fig= keyword is deprecated and will be removed in the next release; "
                      "pass ax= (an Axes or a sequence of Axes) instead", DeprecationWarning, stacklevel=3)
        if ax is not None:
            raise InputError("fig", fig, "None when ax= is given (fig= is deprecated; use ax=)")
        axes = list(np.atleast_1d(fig.subplots(n, 1, sharex=True)))
        return fig, axes, True
    if ax is None:
        fig, axes = plt.subplots(n, 1, sharex=True, figsize=figsize, layout="constrained", squeeze=False)
        return fig, list(axes[:, 0]), True
    axes = [ax] if isinstance(ax, Axes) else list(np.ravel(np.asarray(ax, dtype=object)))
    if len(axes) != n or not all(isinstance(a, Axes) for a in axes):
        raise InputError("ax", ax, f"{n} matplotlib Axes (one per panel)" + (" or one Axes" if n == 1 else ""))
    return axes[0].figure, axes, False


def _legend(ax, where, **kw):
    """Legend outside the axes on the right (``"outside"``), matplotlib's ``"best"`` (``"inside"``) or none."""
    if where in (None, False, "none"):
        return None
    handles, _ = ax.get_legend_handles_labels()
    if not handles:
        return None
    kw.setdefault("fontsize", "small")
    if where == "outside":
        return ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, **kw)
    return ax.legend(loc="best", framealpha=0.9, **kw)


@dataclass
class SweepPlot:
    """Artists drawn by :func:`ecocc.sweeps.plot_sweep`: ``figure``, ``axes``, ``lines`` (Line2D, one-axis
    sweeps), ``mesh`` (QuadMesh, heat maps) and ``colorbar``."""

    figure: object
    axes: object
    lines: list = field(default_factory=list)
    mesh: object = None
    colorbar: object = None

    def savefig(self, *args, **kwargs):
        """Save the figure: ``self.figure.savefig(...)``.

        Parameters
        ----------
        *args, **kwargs
            Passed to :meth:`matplotlib.figure.Figure.savefig` (a path or file, ``dpi``, ...).

        Returns
        -------
        None
            What ``Figure.savefig`` returns.
        """
        return self.figure.savefig(*args, **kwargs)


@dataclass
class MapPlot:
    """Artists drawn by :func:`plot_simulated_map` and :func:`ecocc.stability.plot_stability_map`.

    Attributes
    ----------
    figure : matplotlib.figure.Figure
    axes : matplotlib.axes.Axes
    mesh : matplotlib.collections.QuadMesh
        The colour map of the grid values.
    colorbar : matplotlib.colorbar.Colorbar or None
    contours : dict
        Role -> ContourSet: ``"boundary"`` (stability boundary / outline of the settled region), absent
        when not drawn (a one-row or one-column grid, or no boundary in the plane).
    lines : dict
        Role -> list of Line2D: point markers by regime (``"settled"``, ``"decaying_not_settled"``,
        ``"growing_or_limit_cycle"``, ``"queue_at_bound_rates_changing"``, ``"not_classified"``), run statuses
        (``"status:<name>"``), ``"critical_delay"``, ``"not_certified"``.
    legend : matplotlib.legend.Legend or None
    """

    figure: object
    axes: object
    mesh: object = None
    colorbar: object = None
    contours: dict = field(default_factory=dict)
    lines: dict = field(default_factory=dict)
    legend: object = None

    def savefig(self, *args, **kwargs):
        """``self.figure.savefig(...)`` (so code that expected a figure keeps working).

        Parameters
        ----------
        *args, **kwargs
            Passed to :meth:`matplotlib.figure.Figure.savefig`.

        Returns
        -------
        None
        """
        return self.figure.savefig(*args, **kwargs)


def _map_legend(res, handles, where, created):
    """Legend of a map: ``"auto"`` (below the axes in a figure of its own, else inside), ``"below"``,
    ``"outside"`` (right), ``"inside"`` (best) or None."""
    if where in (None, False, "none") or not handles:
        return None
    if where == "auto":
        where = "below" if created else "inside"
    if where == "below":
        if not created:
            raise InputError("legend", where, "'inside', 'outside' or None when ax= is given (below the axes "
                             "needs a figure of its own)")
        return res.figure.legend(handles=handles, loc="outside lower center", ncol=min(3, len(handles)), fontsize=8)
    if where == "outside":
        return res.axes.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.25, 1.0), fontsize=8)
    if where == "inside":
        return res.axes.legend(handles=handles, loc="best", fontsize=8, framealpha=0.9)
    raise InputError("legend", where, "one of 'auto', 'below', 'outside', 'inside' or None")


# -- time series ------------------------------------------------------------------------------------

TRAJECTORY_PANELS = ("rate", "queue", "fairness")
_LINESTYLES = ("-", (0, (5, 2)), "-.", (0, (1, 1.5)), (0, (8, 2, 1, 2, 1, 2)))
_MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*", "<", ">", "h", "p")


@dataclass
class TrajectoryPlot:
    """Artists drawn by :func:`plot_trajectory`.

    Attributes
    ----------
    figure : matplotlib.figure.Figure
    axes : dict
        Panel name (``"rate"``, ``"queue"``, ``"fairness"``) -> Axes.
    lines : dict
        Lists of :class:`matplotlib.lines.Line2D` by role: ``"rate"`` (one per
        flow, in flow order), ``"rate_ref"`` (model equilibrium rates),
        ``"cross"`` (cross traffic, one per link that has any), ``"queue"``
        (one per link), ``"queue_ref"`` (target or equilibrium queue, RED
        thresholds), ``"utilization"`` (one per link), ``"fairness"``.
    fills : dict
        ``"cross"``: the shaded cross-traffic areas.
    legends : dict
        Panel name -> Legend (absent when no legend was drawn).
    coincident : list of tuple of str
        Groups of flows whose rate curves coincide while they are active
        together, after the transient (named in the rate legend).
    queue_scale : str
        The queue axis scale used (``"auto"`` resolved).
    """

    figure: object
    axes: dict
    lines: dict = field(default_factory=dict)
    fills: dict = field(default_factory=dict)
    legends: dict = field(default_factory=dict)
    coincident: list = field(default_factory=list)
    queue_scale: str = ""

    def savefig(self, *args, **kwargs):
        """Save the figure: ``self.figure.savefig(...)`` (so code that expected a figure keeps working).

        Parameters
        ----------
        *args, **kwargs
            Passed to :meth:`matplotlib.figure.Figure.savefig` (a path or file, ``dpi``, ...).

        Returns
        -------
        None
            What ``Figure.savefig`` returns.
        """
        return self.figure.savefig(*args, **kwargs)


def _coincident_groups(tr, rate_mbps, tol_rel):
    """Groups of flows whose rate curves coincide: two flows are linked when, over the second half of
    the samples at which both are active (after the transient of the later one) or over the final
    summary window, their rates differ by at most ``tol_rel`` times the largest rate plotted.  Groups
    are the connected sets (>= 2 flows)."""
    n = rate_mbps.shape[1]
    t = np.asarray(tr.t_s, dtype=float)
    t_final = t[-1] - tr.summary_window_s  # start of the final (summary) window
    scale = float(np.nanmax(rate_mbps)) if np.isfinite(rate_mbps).any() else 0.0
    parent = list(range(n))

    def root(i):
        while parent[i] != i:
            i = parent[i]
        return i

    for j in range(n):
        for k in range(j + 1, n):
            idx = np.flatnonzero(tr.active[:, j] & tr.active[:, k])
            if idx.size < 10:  # too short a common stretch to call two curves equal
                continue
            for late in (idx[idx.size // 2:], idx[t[idx] >= t_final]):
                d = np.abs(rate_mbps[late, k] - rate_mbps[late, j])
                if late.size >= 2 and np.isfinite(d).all() and d.max() <= tol_rel * scale:
                    parent[root(k)] = root(j)
                    break
    groups = {}
    for j in range(n):
        groups.setdefault(root(j), []).append(j)
    return [g for g in groups.values() if len(g) > 1]


def _num(v):
    """Three significant digits without exponents for the numbers a legend shows (1170, 6.6, 0.05)."""
    v = float(v)
    return f"{v:.0f}" if abs(v) >= 1000 else f"{v:.3g}"


def _names(names):
    names = list(names)
    return ", ".join(names) if len(names) <= 4 else f"{names[0]}, {names[1]}, …, {names[-1]} ({len(names)} flows)"


def _equilibrium_rates(tr):
    eq = tr.equilibrium if isinstance(tr.equilibrium, dict) else None
    if not eq or "rate_pps" not in eq:
        return None
    x = np.asarray(eq["rate_pps"], dtype=float)
    if x.shape != (len(tr.flow_names),):
        return None
    # the equilibrium is that of the flows active at the end of the run (ecocc.results._equilibrium_at_end):
    # NaN exactly for the flows that have left or not started; anything else non-finite is no equilibrium
    end = np.asarray(tr.active[-1], dtype=bool) if len(tr.t_s) else np.ones(x.shape, bool)
    return x if np.isfinite(x[end]).all() and not np.isfinite(x[~end]).any() and end.any() else None


def _equilibrium_queue(tr):
    eq = tr.equilibrium if isinstance(tr.equilibrium, dict) else None
    if not eq or "queue_pkts" not in eq:
        return None
    q = np.asarray(eq["queue_pkts"], dtype=float)
    return q if q.shape == (len(tr.link_names),) else None


def plot_trajectory(tr, ax=None, *, panels=TRAJECTORY_PANELS, queue_scale="auto", legend="outside",
                    markers=True, equilibrium=True, title=None, rate_kw=None, queue_kw=None, cross_kw=None,
                    ref_kw=None, fairness_kw=None, fig=None, **line_kw):
    """Time series of a run: flow rates, link queues, utilization and fairness.

    Parameters
    ----------
    tr : ecocc.Trajectory
        The run.
    ax : matplotlib Axes or sequence of Axes, optional
        One Axes per entry of ``panels``, in that order.  When absent a new
        figure (10 x 2.9 inches per panel, constrained layout) is created.
    panels : sequence of str
        Any of ``"rate"`` (flow rates, Mbps with the run's packet size, and
        the cross traffic offered to each link, shaded), ``"queue"`` (queue
        per link, packets, with the model's target or equilibrium queue as a
        labelled horizontal line) and ``"fairness"`` (utilization per link
        and a Jain's index, both dimensionless).
    queue_scale : {"auto", "symlog", "log", "linear"}
        Scale of the queue axis.  ``"symlog"`` is linear below one packet
        and logarithmic above, so an empty queue, a target of 100 packets and
        a transient of 10^4 packets are all readable.  ``"auto"`` (default)
        chooses ``"symlog"`` when the largest queue exceeds ten times the
        reference queue (target q0 or equilibrium q*; without one, ten times
        the final-window mean) and ``"linear"`` otherwise.
    legend : {"outside", "inside", None}
        ``"outside"`` (default): each panel's legend to the right of its
        axes, where it hides no data; ``"inside"``: matplotlib's ``"best"``.
    markers : bool
        Mark each flow's curve with its own marker at staggered samples, so
        flows with equal rates remain distinguishable.
    equilibrium : bool
        Draw the model's equilibrium (``tr.equilibrium``) where it exists:
        rates over the final summary window, the queue over the whole run.
    title : str or False, optional
        Figure title (default: the scenario and the model).  ``False``: none.
    rate_kw, queue_kw, cross_kw, ref_kw, fairness_kw : dict, optional
        Keywords for the flow-rate lines, queue lines, cross-traffic areas,
        reference lines and the utilization/fairness lines.
    fig : matplotlib Figure, optional
        Deprecated; use ``ax=``.  Accepted for one release with a
        :class:`DeprecationWarning`.
    **line_kw
        Keywords passed to every data line (rates, queues, utilization),
        e.g. ``lw=0.8``.

    Returns
    -------
    TrajectoryPlot
        The figure, the axes by panel and the artists by role.

    Notes
    -----
    A flow is drawn only while it is active (not before it starts, not
    after it stops).  Jain's index of raw rates measures equal shares; where
    the model's equilibrium gives flows different rates (several
    bottlenecks, max-min allocations) the index is taken of the rates
    normalized by that equilibrium, ``x_i / x_i*``, and labelled so.
    """
    panels = tuple(panels)
    bad = [p for p in panels if p not in TRAJECTORY_PANELS]
    if bad or not panels or len(set(panels)) != len(panels):
        raise InputError("panels", panels, f"distinct names among {TRAJECTORY_PANELS}")
    if queue_scale not in ("auto", "symlog", "log", "linear"):
        raise InputError("queue_scale", queue_scale, "'auto', 'symlog', 'log' or 'linear'")
    if legend not in ("outside", "inside", None, False, "none"):
        raise InputError("legend", legend, "'outside', 'inside' or None")
    figure, axes, created = _resolve_axes(ax, len(panels), fig, (10, 2.9 * len(panels) + 0.6), "plot_trajectory")
    A = dict(zip(panels, axes))
    out = TrajectoryPlot(figure=figure, axes=A, lines={k: [] for k in
                         ("rate", "rate_ref", "cross", "queue", "queue_ref", "utilization", "fairness")},
                         fills={"cross": []})
    t = np.asarray(tr.t_s, dtype=float)
    pb = tr.packet_bytes
    rate_mbps = np.where(tr.active, tr.rate_mbps, np.nan)  # nothing drawn while a flow is inactive
    n_flows = len(tr.flow_names)
    colors = [f"C{j % 10}" for j in range(n_flows)]
    x_eq = _equilibrium_rates(tr)

    if "rate" in A:
        a = A["rate"]
        # tolerance 0.5 % of the largest rate: on a ~250-pixel panel two curves closer than this are
        # less than about one line width apart, so one hides the other
        groups = _coincident_groups(tr, rate_mbps, 0.005)
        w1 = float(t[-1])
        w0 = max(float(t[0]), w1 - float(tr.summary_window_s))
        out.coincident = [tuple(tr.flow_names[j] for j in g) for g in groups]
        n_s = t.size
        step = max(n_s // 12, 1)
        for j, nm in enumerate(tr.flow_names):
            # thick-to-thin widths, distinct dashes and markers at staggered samples: equal rates stay visible
            kw = dict(color=colors[j], lw=2.4 - 1.4 * j / max(n_flows - 1, 1), ls=_LINESTYLES[j % len(_LINESTYLES)],
                      label=nm, zorder=2 + j / max(n_flows, 1))
            if markers and n_flows > 1:
                kw.update(marker=_MARKERS[j % len(_MARKERS)], ms=4.5, mfc="white", mew=1.1,
                          markevery=(int(step * (j + 0.5) / n_flows), step))
            kw.update(line_kw)
            kw.update(rate_kw or {})
            out.lines["rate"] += a.plot(t, rate_mbps[:, j], **kw)
        cross = getattr(tr, "cross_pps", None)
        if cross is not None:
            from .units import pps_to_mbps
            cross_mbps = pps_to_mbps(np.asarray(cross, dtype=float), pb)
            shades = ("0.55", "tan", "lightsteelblue", "thistle")
            for li, ln in enumerate(tr.link_names):
                c = cross_mbps[:, li]
                if not np.any(c > 0):
                    continue
                ckw = dict(color=shades[len(out.fills["cross"]) % len(shades)], alpha=0.35, lw=0, step="post")
                ckw.update(cross_kw or {})
                lab = f"cross traffic on {ln} (unresponsive)"
                out.fills["cross"].append(a.fill_between(t, 0, c, zorder=1, label=lab, **ckw))
                edge = {k: v for k, v in ckw.items() if k in ("color",)}
                out.lines["cross"] += a.plot(t, c, drawstyle="steps-post", lw=0.6, zorder=1.5, **edge)
        # the model's equilibrium is that of all flows: drawn only if all are active through the final window
        # (the last sample is left out: a flow whose stop time is the end of the run is inactive there)
        wfin = (t >= w0) & (t < w1)
        if equilibrium and x_eq is not None and np.isfinite(x_eq).all() and wfin.any() and tr.active[wfin].all():
            from .units import pps_to_mbps
            vals = sorted({round(float(v), 9) for v in pps_to_mbps(x_eq, pb)})
            for k, v in enumerate(vals):
                # below the data (zorder 1.8): where the run sits on x* the data line is what shows
                rkw = dict(color="k", lw=1.0, ls=(0, (2, 2)), zorder=1.8)
                rkw.update(ref_kw or {})
                lab = "model equilibrium x* (final window)" if k == 0 else None
                out.lines["rate_ref"] += a.plot([w0, w1], [v, v], label=lab, **rkw)
        a.set_ylabel(f"rate (Mbps, {pb:g}-byte packets)")
        a.set_ylim(bottom=0)
        title_note = None
        if groups:
            title_note = "equal rates while active together\n(curves coincide):\n" + "\n".join(
                textwrap.fill(_names(n), 34) for n in out.coincident)
        lg = _legend(a, legend, ncol=2 if n_flows > 12 else 1, title=title_note, title_fontsize="small")
        if lg is not None:
            lg._legend_box.align = "left"
            out.legends["rate"] = lg

    if "queue" in A:
        a = A["queue"]
        wq = t >= t[-1] - tr.summary_window_s
        for li, ln in enumerate(tr.link_names):
            lab = f"queue at {ln}"
            if wq.sum() > 1:  # say what the final window holds: a dense oscillation reads as a solid band
                qw = tr.queue_pkts[wq, li]
                i0 = np.flatnonzero(wq)[0]
                # time mean from the integrated queue (exact, as in the summary), not from the samples
                qmean = (tr.queue_area_pkt_s[-1, li] - tr.queue_area_pkt_s[i0, li]) / (t[-1] - t[i0])
                lo, hi = float(np.min(qw)), float(np.max(qw))
                if hi - lo <= 1e-3 * max(abs(hi), 1.0):  # constant to 0.1 % (or 0.001 packet)
                    lab += f"\n(last {t[-1] - t[i0]:g} s: {qmean:.4g} packets, constant to 0.1 %)"
                else:
                    lab += (f"\n(last {t[-1] - t[i0]:g} s: mean {_num(qmean)}, range {_num(lo)}–{_num(hi)}"
                            " packets)")
            # thick-to-thin and dashed, as for the rates: equal queues on several links stay visible
            kw = dict(color=f"C{li % 10}" if len(tr.link_names) > 1 else "C0",
                      lw=2.2 - 1.0 * li / max(len(tr.link_names) - 1, 1) if len(tr.link_names) > 1 else 1.3,
                      ls=_LINESTYLES[li % len(_LINESTYLES)], label=lab)
            kw.update(line_kw)
            kw.update(queue_kw or {})
            out.lines["queue"] += a.plot(t, tr.queue_pkts[:, li], **kw)
        q_eq = _equilibrium_queue(tr) if equilibrium else None
        all_on = bool(tr.active[t < t[-1]].all()) if (t < t[-1]).any() else bool(tr.active.all())
        has_q0 = "q0_pkts" in (tr.params or {})
        if has_q0 and equilibrium and (q_eq is None or not (np.isfinite(q_eq) & (q_eq > 0)).any()):
            # the target q0 is a parameter of the law even where no equilibrium exists (time-varying cross
            # traffic); a link's own target_queue_pkts is not recorded in the trajectory, so this is the default
            q_eq = np.full(len(tr.link_names), float(tr.params["q0_pkts"]))
        if q_eq is not None:
            for v in sorted({float(v) for v in q_eq if np.isfinite(v) and v > 0}):
                links = [ln for ln, q in zip(tr.link_names, q_eq) if q == v]
                where = "" if len(tr.link_names) == 1 else f" at {', '.join(links)}"
                lab = (f"target queue q0 = {v:g} packets{where}" if has_q0
                       else f"model equilibrium queue q* = {v:.4g} packets{where}" + (
                           "" if all_on else f"\n(with all {n_flows} flows active)"))
                rkw = dict(color="k", lw=1.0, ls=(0, (4, 2)), zorder=1.8)  # below the data
                rkw.update(ref_kw or {})
                out.lines["queue_ref"].append(a.axhline(v, label=lab, **rkw))
        qmax = float(np.nanmax(tr.queue_pkts)) if tr.queue_pkts.size else 0.0
        refs = [ln.get_ydata()[0] for ln in out.lines["queue_ref"]]
        if queue_scale == "auto":
            w = t >= t[-1] - tr.summary_window_s
            ref = min(refs) if refs else float(np.nanmean(tr.queue_pkts[w])) if w.any() else 0.0
            # a factor of ten: beyond it a linear axis squeezes the reference into the bottom tenth
            queue_scale = "symlog" if qmax > 10 * max(ref, 1.0) else "linear"
        out.queue_scale = queue_scale
        top = 1.12 * max([qmax, 1.0] + refs)  # linear axis: room above the largest queue and the reference
        P = tr.params or {}
        if P.get("aqm") == "red" and "red_min_th_pkts" in P:
            th = {"minimum": P["red_min_th_pkts"], "maximum": P["red_max_th_pkts"]}
            shown = {k: v for k, v in th.items() if queue_scale != "linear" or v <= top}
            hidden = [f"{k} {v:g}" for k, v in th.items() if k not in shown]
            for k, (nm, v) in enumerate(shown.items()):
                rkw = dict(color="0.4", lw=0.9, ls=":", zorder=1.5)
                rkw.update(ref_kw or {})
                lab = None
                if k == 0:
                    lab = "RED " + " and ".join(f"{n} threshold {x:g}" for n, x in shown.items()) + " packets"
                    if hidden:
                        lab += f"\n(RED {', '.join(hidden)} packets: above the axis)"
                out.lines["queue_ref"].append(a.axhline(v, label=lab, **rkw))
        if queue_scale == "symlog":
            # linear below one packet (an empty queue reads 0), logarithmic above
            a.set_yscale("symlog", linthresh=1.0, linscale=0.4)
            a.set_ylim(bottom=0)
        elif queue_scale == "log":
            a.set_yscale("log")
        else:
            a.set_ylim(0, top)
        a.set_ylabel("queue (packets)" + ("" if queue_scale == "linear" else f", {queue_scale} scale"))
        lg = _legend(a, legend)
        if lg is not None:
            out.legends["queue"] = lg

    if "fairness" in A:
        a = A["fairness"]
        tm, u = tr.utilization(bin_s=max((t[-1] - t[0]) / 400, 1e-3))
        for li, ln in enumerate(tr.link_names):
            kw = dict(color=f"C{li % 10}" if len(tr.link_names) > 1 else "C0", lw=1.1,
                      ls=_LINESTYLES[li % len(_LINESTYLES)], label=f"utilization of {ln}")
            kw.update(line_kw)
            kw.update(fairness_kw or {})
            out.lines["utilization"] += a.plot(tm, u[:, li], **kw)
        raw = tr.jain()
        fkw = dict(color="k", lw=1.0, ls="--")
        fkw.update(fairness_kw or {})
        # equilibrium shares differ (beyond rounding) -> raw Jain's index is not the fairness criterion
        unequal = x_eq is not None and bool((x_eq > 0).any()) and np.ptp(x_eq[x_eq > 0]) > 1e-9 * np.max(x_eq)
        if unequal:
            from .results import jain_index
            ok = x_eq > 0
            # x* is the equilibrium of the flows active at the end: the index is taken only where exactly
            # those flows are active
            full = (tr.active == tr.active[-1][None, :]).all(axis=1)
            xn = np.where(full[:, None] & ok[None, :], tr.rate_pps / np.where(ok, x_eq, 1.0)[None, :], np.nan)
            lab = "Jain's index of x_i / x_i*: rates over the\nmodel equilibrium x* (unequal shares here)"
            if not full.all():
                lab += ("\n(drawn while all flows are active)" if tr.active[-1].all()
                        else "\n(drawn while the flows active at the end are, and only they)")
            n_zero = int((np.isfinite(x_eq) & ~ok).sum())
            if n_zero:
                lab += f"; {n_zero} flow(s) with x* = 0 left out"
            out.lines["fairness"] += a.plot(t, jain_index(xn, axis=1), label=lab, **fkw)
            gkw = dict(fkw, color="0.6", lw=0.9, ls=":")
            out.lines["fairness"] += a.plot(t, raw, label="Jain's index of raw rates (not max-min)", **gkw)
        else:
            lab = ("Jain's index of rates, active flows\n(equal shares at the model equilibrium)"
                   if x_eq is not None else "Jain's index of raw rates, active flows")
            out.lines["fairness"] += a.plot(t, raw, label=lab, **fkw)
        a.set_ylabel("utilization, Jain's index (1)")
        a.set_ylim(-0.05, 1.1)
        lg = _legend(a, legend)
        if lg is not None:
            out.legends["fairness"] = lg

    for a in axes:
        a.grid(alpha=0.3)
        a.set_xlim(t[0], t[-1])
    axes[-1].set_xlabel("time (s)")
    if title is not False:
        status = "" if tr.ok else f"  [run status: {tr.status.value}]"
        text = title or f"Scenario {tr.name} — model {model_label(tr.model)}{status}"
        if created:
            figure.suptitle(text)
        else:
            axes[0].set_title(text)
    return out


def _axis_label(coord, model=None) -> str:
    """``words (units)`` of a map axis: the words of :data:`ecocc.stability.maps.WORDS` (the roots map's), else
    the parameter's description in ``model``'s Params docstring up to its first parenthesis (``ecocc params``),
    else the name."""
    from .stability.maps import WORDS
    name = str(coord.attrs.get("long_name", coord.name))
    words = WORDS.get(name)
    if words is None and model:
        try:
            from .cli_params import describe
            desc = {p["name"]: p["description"] for p in describe(str(model))["parameters"]}.get(name, "")
        except (KeyError, ValueError, InputError):  # a mixed network's protocol__field axis, an unknown model
            desc = ""
        words = desc.split(" (")[0].split(",")[0].strip() if desc and not desc.startswith("(") else None
    return f"{words or name} ({coord.attrs.get('units', '-')})"


def _points(n) -> str:
    return f"{int(n)} point" + ("" if int(n) == 1 else "s")


#: markers of the grid points whose run did not succeed, by status
_STATUS_MARKERS = {"failed": dict(marker="x", color="r", mew=2),
                   "inaccurate": dict(marker="^", color="orange", mfc="none", mew=1.5),
                   "interrupted": dict(marker="s", color="0.5", mfc="none", mew=1.5)}


def plot_simulated_map(ds, ax=None, *, legend="auto", title=None, boundary_kw=None, marker_kw=None, colorbar=True,
                       **mesh_kw):
    """Plot a :func:`ecocc.batch.simulate_map` dataset.

    Colour: log10 of the largest queue swing over the links (packets, peak to
    peak over the verdict window; swings below 1e-6 packet are clipped).
    The settled region is outlined (contour of ``stable`` at 0.5); every
    point carries the marker of its regime (settled, decaying but not
    settled, growing or limit cycle, a queue at a bound with the rates still
    changing, not classified), counted in the legend;
    points whose run did not succeed are marked by status.
    Axis labels come from the ``long_name`` and ``units`` of ``x``/``y``.

    Parameters
    ----------
    ds : xarray.Dataset
        From :func:`ecocc.batch.simulate_map`.
    ax : matplotlib Axes, optional
        Where to draw; a new figure (7.5 x 6 inches, constrained layout) when absent.
    legend : {"auto", "below", "outside", "inside", None}
        ``"auto"`` (default): below the axes in a figure of its own, inside (matplotlib's ``"best"``) when
        ``ax`` is given.
    title : str or False, optional
        Axes title (default: scenario, model, verdict and the decay rule).  ``False``: none.
    boundary_kw : dict, optional
        Keywords for the outline of the settled region (``Axes.contour``).
    marker_kw : dict, optional
        Keywords applied to every point marker (regimes and statuses), e.g. ``ms=6``.
    colorbar : bool
        Draw the colour bar.
    **mesh_kw
        Passed to ``Axes.pcolormesh``, e.g. ``cmap="magma"``.

    Returns
    -------
    MapPlot
        ``figure``, ``axes``, ``mesh``, ``colorbar``, ``contours`` (``"boundary"``), ``lines`` by regime and
        status, ``legend`` and ``savefig``.
    """
    import matplotlib.patheffects as pe
    from matplotlib.lines import Line2D

    fig, (ax,), created = _resolve_axes(ax, 1, None, (7.5, 6), "plot_simulated_map")
    res = MapPlot(figure=fig, axes=ax)
    x, y = ds["x"].values, ds["y"].values
    swing = ds["queue_swing_pkts"].max(dim="link", skipna=False).values
    z = np.log10(np.clip(swing, 1e-6, None))
    res.mesh = ax.pcolormesh(x, y, z, **{"shading": "nearest", "cmap": "viridis", **mesh_kw})
    thr = ds.attrs.get("swing_threshold_pkts")
    label = "log10 of largest queue swing over links (packets)"
    mark_thr = thr is not None and np.isfinite(z).any() and np.nanmin(z) <= np.log10(thr) <= np.nanmax(z)
    if colorbar:
        if mark_thr:
            label += f"\nwhite line: threshold {thr:g} packet(s)"
        res.colorbar = fig.colorbar(res.mesh, ax=ax, label=label)
        if mark_thr:
            res.colorbar.ax.axhline(np.log10(thr), color="w", lw=2,
                                    path_effects=[pe.withStroke(linewidth=3.5, foreground="k")])

    outline = [pe.withStroke(linewidth=4, foreground="k")]
    stable = ds["stable"].values.astype(bool)
    Y, X = np.meshgrid(y, x, indexing="ij")
    handles = []
    if stable.any() and not stable.all() and x.size > 1 and y.size > 1:
        bkw = {"colors": "w", "linewidths": 2, "path_effects": outline, **(boundary_kw or {})}
        res.contours["boundary"] = ax.contour(x, y, stable.astype(float), levels=[0.5], **bkw)
        handles.append(Line2D([], [], color=np.atleast_1d(bkw["colors"])[0], lw=np.atleast_1d(bkw["linewidths"])[0],
                              path_effects=bkw.get("path_effects"), label="boundary of the settled region"))
    if "regime" in ds:
        regime = ds["regime"].values
    else:  # a map written before the regimes: settled or not only
        regime = np.where(stable, 0, np.where(ds["status"].values.astype(str) == "success", -2, -1))
    ok = ds["status"].values.astype(str) == "success"
    styles = {0: ("settled", "settled", dict(marker="o", color="w", mec="k", mew=0.6, ms=4)),
              1: ("decaying_not_settled", "decaying, not settled", dict(marker="v", color="c", mec="k", mew=0.4, ms=4)),
              2: ("growing_or_limit_cycle", "growing or limit cycle",
                  dict(marker="^", color="r", mec="k", mew=0.4, ms=4)),
              3: ("queue_at_bound_rates_changing", "queue at a bound, rates still changing",
                  dict(marker="D", color="y", mec="k", mew=0.4, ms=4)),
              -1: ("not_classified", "not classified (decay not measured)",
                   dict(marker="s", color="0.6", mec="k", mew=0.4, ms=4)),
              -2: ("not_settled", "not settled (map without regimes)",
                   dict(marker="s", color="0.6", mec="k", mew=0.4, ms=4))}
    for code, (role, label, style) in styles.items():
        style = {**style, **(marker_kw or {})}
        sel = (regime == code) & ok
        if sel.any() or code in (0, 1, 2):
            res.lines[role] = ax.plot(X[sel], Y[sel], ls="", **style) if sel.any() else []
            handles.append(Line2D([], [], ls="", **style, label=f"{label} ({_points(sel.sum())} of {stable.size})"))

    status = ds["status"].values.astype(str)
    for st in sorted(set(status.ravel()) - {"success"}):
        sel = status == st
        style = {"ms": 8, **_STATUS_MARKERS.get(st, dict(marker="D", color="m", mfc="none", mew=1.5)),
                 **(marker_kw or {})}
        res.lines[f"status:{st}"] = ax.plot(X[sel], Y[sel], ls="", **style)
        handles.append(Line2D([], [], ls="", **style, label=f"run {st} ({_points(sel.sum())})"))

    ax.set_xlabel(_axis_label(ds["x"], ds.attrs.get("model")))
    ax.set_ylabel(_axis_label(ds["y"], ds.attrs.get("model")))
    if title is not False:
        if title is None:
            # the readings that differ from the defaults, as in the map's file names (cli_readings.readings_stem)
            readings = [f"{k} {ds.attrs[k]}" for k, d in (("past", "silent"), ("load_rtt", "current"))
                        if str(ds.attrs.get(k, d)) != d]
            head = (f"Stability by simulation: scenario {ds.attrs.get('scenario', '?')}, "
                    f"model {ds.attrs.get('model', '?')}" + "".join(f", {r}" for r in readings))
            verdict = str(ds.attrs.get("verdict", ""))
            lines = textwrap.wrap(head, 90) + textwrap.wrap(verdict[:1].upper() + verdict[1:], 90)
            if "decay_ratio" in ds.attrs:
                w = float(ds.attrs.get("window_s", float("nan")))
                lines += textwrap.wrap(f"Decaying: the swing shrinks by at least "
                                       f"{100 * (1 - float(ds.attrs['decay_ratio'])):g} % from one {w:g} s window "
                                       f"to the last", 90)
            title = "\n".join(lines)
        ax.set_title(title, fontsize=9)
    res.legend = _map_legend(res, handles, legend, created)
    return res
