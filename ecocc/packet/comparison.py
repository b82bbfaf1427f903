"""Fluid model and packet level side by side (``ecocc compare``).

Both runs are reduced to the same bins: the packet run's sampling instants ``t_k = k * bin_s``.
A flow's binned rate is ``(sent(t_k) - sent(t_{k-1})) / bin_s`` from each run's cumulative sent
packets (the fluid one is exact: its ``sent`` is integrated with the states), a link's binned
queue is the time mean over the bin from the cumulative queue area.  So the RMS differences
compare like with like, without sampling the fluid trajectory at instants.

Steady values are means over the scenario's final window ``[t_end - summary_window_s, t_end]``.

Convergence time (a definition, ours): on bins of 1 s (the papers sample rates over 1 s
intervals; the bin width if that is longer), the end of the first bin after which every flow
active at the end stays within +-10 % of its final-window mean rate (and at least +-2 packets per
bin, the counting resolution of a binned packet rate) until the end.  ``None`` when it never
settles.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..results import Trajectory, _jsonable, jain_index
from ..units import pps_to_mbps

CONV_BAND = 0.10         # +-10 % of the final-window mean rate
CONV_MIN_PKTS_PER_BIN = 2.0
CONV_BIN_S = 1.0         # bins of the convergence time (s)


def binned(tr: Trajectory, edges_s: np.ndarray):
    """Reduce a run to per-bin means from its cumulative counters (linear between samples).

    Parameters
    ----------
    tr : Trajectory
        A fluid or packet-level run.
    edges_s : numpy.ndarray
        Bin edges, seconds, increasing.

    Returns
    -------
    rate : numpy.ndarray
        Mean sending rate per bin and flow, packets/s, shape ``(n_bins, n_flows)``.
    queue : numpy.ndarray
        Mean queue per bin and link, packets, shape ``(n_bins, n_links)``.
    departures : numpy.ndarray
        Mean departure rate per bin and link, packets/s, shape ``(n_bins, n_links)``.
    """
    def at(series):
        return np.array([np.interp(edges_s, tr.t_s, series[:, j]) for j in range(series.shape[1])]).T
    dt = np.diff(edges_s)[:, None]
    rate = np.diff(at(tr.sent_pkts), axis=0) / dt
    queue = np.diff(at(tr.queue_area_pkt_s), axis=0) / dt
    dep = np.diff(at(tr.departed_pkts), axis=0) / dt
    return rate, queue, dep


def _active_bins(net, edges):
    a = net.arrays
    return (a.start_s[None, :] <= edges[:-1, None] + 1e-9) & (edges[1:, None] <= a.stop_s[None, :] + 1e-9)


def convergence_time(rate_bins, edges, steady_pps, flows_at_end, bin_s):
    """Return the end time of the first bin after which all ``flows_at_end`` stay in the band; None if never.

    The band is +-:data:`CONV_BAND` of each flow's steady rate, at least
    :data:`CONV_MIN_PKTS_PER_BIN` packets per bin.

    Parameters
    ----------
    rate_bins : numpy.ndarray
        Binned rates, packets/s, shape ``(n_bins, n_flows)``.
    edges : numpy.ndarray
        Bin edges, seconds, ``n_bins + 1`` of them.
    steady_pps : array_like
        Final-window mean rate per flow, packets/s.
    flows_at_end : numpy.ndarray
        Boolean mask of the flows judged (active at the end).
    bin_s : float
        Bin width, seconds.

    Returns
    -------
    float or None
        Seconds (an edge of ``edges``; ``edges[0]`` when always inside); None if the last bin is outside
        the band or no flow is judged.
    """
    if not np.any(flows_at_end):
        return None
    x = rate_bins[:, flows_at_end]
    s = np.asarray(steady_pps)[flows_at_end]
    band = np.maximum(CONV_BAND * np.abs(s), CONV_MIN_PKTS_PER_BIN / bin_s)
    inside = np.all(np.abs(x - s[None, :]) <= band[None, :], axis=1)
    if not inside[-1]:
        return None
    bad = np.nonzero(~inside)[0]
    k = 0 if bad.size == 0 else bad[-1] + 1
    return float(edges[k])


@dataclass
class Comparison:
    """Fluid and packet runs of one scenario, reduced to the same bins and window.

    Built by :func:`build_comparison` (which also sets the per-bin activity :meth:`plot` needs).

    Attributes
    ----------
    scenario : str
        Scenario name.
    fluid, packet : Trajectory
        The two runs.
    edges_s : numpy.ndarray
        Bin edges, seconds (the packet run's sampling instants).
    rows : list of dict
        Table rows: ``quantity``, ``unit``, ``fluid``, ``packet``, ``paper``.
    rms : dict
        RMS differences per flow (packets/s and fraction of capacity) and per link (packets).
    paper_source, paper_where : str
        Where the paper's numbers come from.
    notes : list of str
        What the comparison assumes or leaves out.
    """

    scenario: str
    fluid: Trajectory
    packet: Trajectory
    edges_s: np.ndarray
    rows: list = field(default_factory=list)  # dicts: quantity, unit, fluid, packet, paper
    rms: dict = field(default_factory=dict)
    paper_source: str = ""
    paper_where: str = ""
    notes: list = field(default_factory=list)

    def _cells(self):
        def fmt(v):
            if v is None or (isinstance(v, float) and not math.isfinite(v)):
                return "-"
            if isinstance(v, str):
                return v
            a = abs(v)
            return f"{v:.4g}" if a == 0 or 1e-3 <= a < 1e6 else f"{v:.3e}"
        head = ("quantity", "unit", "fluid", "packet (ns-3)", "packet - fluid", "paper")
        body = []
        for r in self.rows:
            d = None
            if isinstance(r["fluid"], (int, float)) and isinstance(r["packet"], (int, float)):
                d = r["packet"] - r["fluid"]
            body.append((r["quantity"], r["unit"], fmt(r["fluid"]), fmt(r["packet"]), fmt(d), fmt(r.get("paper"))))
        return head, body

    def format_table(self) -> str:
        """Format the side-by-side table as text.

        Returns
        -------
        str
            Fixed-width columns: quantity, unit, fluid, packet (ns-3), packet - fluid, paper (``-``: none).
        """
        head, body = self._cells()
        w = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)]

        def line(cells):
            return "  ".join(c.ljust(w[i]) if i < 2 else c.rjust(w[i]) for i, c in enumerate(cells))
        return "\n".join([line(head), line(tuple("-" * k for k in w))] + [line(b) for b in body])

    def format_markdown(self) -> str:
        """Format the side-by-side table as Markdown.

        Returns
        -------
        str
            A Markdown table with the columns of :meth:`format_table`.
        """
        head, body = self._cells()
        lines = ["| " + " | ".join(head) + " |", "|---|---|---:|---:|---:|---:|"]
        lines += ["| " + " | ".join(b) + " |" for b in body]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """Return the comparison as JSON-able data.

        Returns
        -------
        dict
            ``scenario``, ``bin_s`` and ``window_s`` (seconds), ``rows``, ``rms``, the paper's source, the notes,
            and model, status and message of both runs (plus the packet run's ``solver`` record).
        """
        return _jsonable({
            "scenario": self.scenario, "bin_s": float(self.edges_s[1] - self.edges_s[0]),
            "window_s": self.fluid_window(), "rows": self.rows, "rms": self.rms, "paper_source": self.paper_source,
            "paper_where": self.paper_where, "notes": self.notes,
            "fluid": {"model": self.fluid.model, "status": self.fluid.status.value, "message": self.fluid.message},
            "packet": {"model": self.packet.model, "status": self.packet.status.value, "message": self.packet.message,
                       "solver": self.packet.solver},
        })

    def fluid_window(self):
        """Return the final window the steady values are averaged over.

        Returns
        -------
        list of float
            ``[t0, t1]`` in seconds: the packet run's ``summary_window_s`` before the last edge.
        """
        t1 = float(self.edges_s[-1])
        return [max(0.0, t1 - self.packet.summary_window_s), t1]

    def plot(self, fig=None):
        """Plot per-flow binned rates and per-link binned queues of both runs overlaid.

        Parameters
        ----------
        fig : matplotlib.figure.Figure or None, optional
            Figure to draw into; None creates one.

        Returns
        -------
        matplotlib.figure.Figure
            Rates in Mbit/s at the packet run's packet size (packet solid, fluid dashed, inactive bins blank)
            and queues in packets (bin means).
        """
        import matplotlib.pyplot as plt
        e = self.edges_s
        tm = e[1:]
        rf, qf, _ = binned(self.fluid, e)
        rp, qp, _ = binned(self.packet, e)
        if fig is None:
            fig = plt.figure(figsize=(10, 7.5), layout="constrained")
        ax = fig.subplots(2, 1, sharex=True)
        pb = self.packet.packet_bytes
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for j, nm in enumerate(self.packet.flow_names):
            c = colors[j % len(colors)]
            act = self._act[:, j]
            ax[0].plot(tm, np.where(act, pps_to_mbps(rp[:, j], pb), np.nan), color=c, lw=0.9, alpha=0.8,
                       label=f"{nm} packet")
            ax[0].plot(tm, np.where(act, pps_to_mbps(rf[:, j], pb), np.nan), color=c, lw=1.6, ls="--",
                       label=f"{nm} fluid")
        ax[0].set_ylabel(f"rate (Mbps, {pb:g}-byte packets; {e[1] - e[0]:g} s bins)")
        ax[0].legend(loc="upper right", fontsize="small", ncol=2)
        for j, nm in enumerate(self.packet.link_names):
            c = colors[j % len(colors)]
            ax[1].plot(tm, qp[:, j], color=c, lw=0.9, alpha=0.8, label=f"{nm} packet")
            ax[1].plot(tm, qf[:, j], color=c, lw=1.6, ls="--", label=f"{nm} fluid")
        ax[1].set_ylabel("queue (packets, bin mean)")
        ax[1].set_xlabel("time (s)")
        ax[1].legend(loc="upper right", fontsize="small", ncol=2)
        for a in ax:
            a.grid(alpha=0.3)
        fig.suptitle(f"{self.scenario}: fluid model ({self.fluid.model}, dashed) vs ns-3 packet level "
                     f"({self.packet.solver.get('driver_protocol')}, solid)")
        return fig


def build_comparison(sc, fluid: Trajectory, packet: Trajectory, capacity_scale: float = 1.0,
                     with_paper: bool = True) -> Comparison:
    """Reduce both runs to the packet run's bins and final window; fill the table and RMS differences.

    When the packet run loses packets in the final window, the table adds each flow's delivered rate (data packets
    reaching the receiver per second) beside its sending rate.

    Parameters
    ----------
    sc : Scenario
        The (scaled) scenario both runs used.
    fluid : Trajectory
        The fluid run.
    packet : Trajectory
        The packet-level run (its samples are the bin edges).
    capacity_scale : float, optional
        Factor the capacities were scaled by (the paper's rates are scaled alike).
    with_paper : bool, optional
        Include the paper's numbers; False leaves them out (they describe the scenario's full run).

    Returns
    -------
    Comparison
        Rows of steady means (rates in Mbit/s, queues in packets, utilization, loss ratio), Jain's index,
        the RTT rate ratio, delivered rates when packets were lost, convergence times (s, or ``"never"``)
        and RMS differences.
    """
    from .paper import PAPER
    e = np.asarray(packet.t_s, dtype=float)
    bin_s = float(e[1] - e[0])
    net = sc.network
    act = _active_bins(net, e)
    rf, qf, _ = binned(fluid, e)
    rp, qp, _ = binned(packet, e)
    w = packet.summary_window_s
    sf, sp = fluid.summary(window_s=w), packet.summary(window_s=w)
    paper = PAPER.get(sc.name, {}) if with_paper else {}
    pb = net.packet_bytes
    rows = []
    for j, nm in enumerate(packet.flow_names):
        pm = paper.get("rate_mbps", {}).get(nm)
        rows.append({"quantity": f"rate {nm}", "unit": "Mbps", "fluid": sf["flows"][j]["mean_rate_mbps"],
                     "packet": sp["flows"][j]["mean_rate_mbps"],
                     "paper": None if pm is None else pm * capacity_scale})
    lost_w = sum(lk["lost_pkts"] for lk in sp["links"])
    recv = packet.flow_vars.get("received")
    if lost_w > 0 and recv is not None:
        # with losses the sending rate ("rate") and the rate of data packets reaching the receiver differ: the
        # rate-based senders do not retransmit (a lost packet is gone), a TCP's deliveries include retransmissions
        t0, t1 = sp["window_s"]
        for j, nm in enumerate(packet.flow_names):
            d = np.interp(t1, packet.t_s, recv[:, j]) - np.interp(t0, packet.t_s, recv[:, j])
            rows.append({"quantity": f"delivered rate {nm}", "unit": "Mbps", "fluid": None,
                         "packet": pps_to_mbps(d / (t1 - t0), pb) if t1 > t0 else None, "paper": None})
    for j, nm in enumerate(packet.link_names):
        for key, q, unit in (("mean_queue_pkts", "queue", "packets"), ("utilization", "utilization", "1"),
                             ("loss_ratio", "loss ratio", "1")):
            pk = {"mean_queue_pkts": "queue_pkts"}.get(key, key)
            rows.append({"quantity": f"{q} {nm}", "unit": unit, "fluid": sf["links"][j][key],
                         "packet": sp["links"][j][key], "paper": paper.get(pk, {}).get(nm)})
    steady_f = np.array([f["mean_rate_pps"] for f in sf["flows"]])
    steady_p = np.array([f["mean_rate_pps"] for f in sp["flows"]])
    # flows active over the whole last bin (a flow whose stop_s is t_end is inactive *at* t_end in
    # Trajectory.summary, yet it is the one the final window describes)
    at_end = act[-1]
    rows.append({"quantity": "Jain's index (flows active at the end)", "unit": "1",
                 "fluid": float(jain_index(steady_f[at_end])) if at_end.any() else None,
                 "packet": float(jain_index(steady_p[at_end])) if at_end.any() else None, "paper": None})
    idx = np.nonzero(at_end)[0]
    if idx.size >= 2 and np.ptp(net.arrays.rtt_s[idx]) > 0:  # RTT (un)fairness: shortest- over longest-RTT flow
        i0 = idx[np.argmin(net.arrays.rtt_s[idx])]
        i1 = idx[np.argmax(net.arrays.rtt_s[idx])]
        ratio = lambda s: float(s[i0] / s[i1]) if s[i1] > 0 else math.inf  # noqa: E731
        rows.append({"quantity": f"rate ratio {net.flows[i0].name}/{net.flows[i1].name} (RTT "
                                 f"{1e3 * net.flows[i0].rtt_s:g}/{1e3 * net.flows[i1].rtt_s:g} ms)",
                     "unit": "1", "fluid": ratio(steady_f), "packet": ratio(steady_p), "paper": None})
    k = max(1, int(round(CONV_BIN_S / bin_s)))
    ec = e[::k] if (e.size - 1) % k == 0 else np.append(e[::k], e[-1])
    cbin = float(ec[1] - ec[0]) if ec.size > 1 else bin_s
    tcf = convergence_time(binned(fluid, ec)[0], ec, steady_f, at_end, cbin)
    tcp = convergence_time(binned(packet, ec)[0], ec, steady_p, at_end, cbin)
    rows.append({"quantity": f"convergence time (+-10 %, {cbin:g} s bins)", "unit": "s", "fluid": tcf if tcf is not None else "never",
                 "packet": tcp if tcp is not None else "never", "paper": None})
    rms = {"flows": {}, "links": {}}
    for j, nm in enumerate(packet.flow_names):
        sel = act[:, j]
        if np.any(sel):
            d = rp[sel, j] - rf[sel, j]
            cap = min(net.links[net.link_index(ln)].capacity_pps for ln in net.flows[j].route)
            v = float(np.sqrt(np.mean(d * d)))
            rms["flows"][nm] = {"rms_pps": v, "rms_fraction_of_capacity": v / cap, "n_bins": int(sel.sum())}
            rows.append({"quantity": f"RMS rate difference {nm}", "unit": "% of C", "fluid": None,
                         "packet": 100 * v / cap, "paper": None})
    for j, nm in enumerate(packet.link_names):
        d = qp[:, j] - qf[:, j]
        v = float(np.sqrt(np.mean(d * d)))
        rms["links"][nm] = {"rms_queue_pkts": v, "n_bins": int(d.size)}
        rows.append({"quantity": f"RMS queue difference {nm}", "unit": "packets", "fluid": None, "packet": v,
                     "paper": None})
    notes = [f"packet size {pb:g} bytes; bins of {bin_s:g} s; steady values over {sp['window_s'][0]:g}-"
             f"{sp['window_s'][1]:g} s",
             f"packet protocol: {packet.solver.get('driver_protocol')}; fluid model: {fluid.model}"]
    if lost_w > 0 and recv is not None:
        notes.append("rate = data packets the sender put on its access link per second (lost ones included); "
                     "delivered rate = data packets reaching the receiver per second"
                     + (" (the rate-based senders do not retransmit: delivered = goodput)"
                        if packet.solver.get("protocol") in ("aecp", "petcp", "symbiosis") else
                        " (TCP: retransmissions included)"))
    if packet.solver.get("red"):
        notes.append("loss: the packet run counts RED drops and tail drops; the fluid Reno model's RED probability "
                     "is a loss signal, and its loss ratio counts buffer overflow only")
    if capacity_scale != 1.0:
        notes.append(f"capacities scaled by {capacity_scale:g}; the paper's rates scaled alike")
    c = Comparison(scenario=sc.name, fluid=fluid, packet=packet, edges_s=e, rows=rows, rms=rms,
                   paper_source=paper.get("source", ""), paper_where=paper.get("where", ""), notes=notes)
    c._act = act
    return c


def compare(scenario, *, protocol=None, t_end_s=None, bin_s=0.1, seed=1, capacity_scale=1.0, overrides=None,
            progress=False, python=None, fluid_kwargs=None, symbiosis_tau="measured") -> Comparison:
    """Run ``scenario`` with the fluid model (:func:`ecocc.simulate`) and in ns-3, and compare.

    The fluid run uses the scenario's model with the same parameter overrides, on the same (scaled)
    network, to the same end time.

    Parameters
    ----------
    scenario : str, Path or Scenario
        A shipped name, a TOML path or a loaded scenario.
    protocol : str, optional
        Packet-level protocol; default the scenario model's.
    t_end_s : float, optional
        Simulated time, seconds (default: the scenario's duration; with another end time the paper's
        numbers are left out).
    bin_s : float
        Bin width of the comparison, seconds.
    seed : int
        ns-3 random seed.
    capacity_scale : float
        Multiply every capacity (packet-level runs cost time in proportion to packets).
    overrides : dict, optional
        Model parameters for both runs.
    progress : bool
        Progress bars.
    python : str, optional
        Interpreter with the ``ns3`` wheel.
    fluid_kwargs : dict, optional
        Passed to :func:`ecocc.simulate.simulate` (e.g. ``engine="numba"``).
    symbiosis_tau : {"measured", "propagation"}
        TCP Symbiosis's tau_i at packet level (see :func:`ecocc.packet.spec.build_spec`).

    Returns
    -------
    Comparison
        The side-by-side comparison.

    Raises
    ------
    InputError
        For a bad scenario, protocol or parameter (fluid or packet level).
    PacketBackendError
        When the ns-3 child process fails.
    """
    from .. import scenarios
    from ..simulate import simulate
    from .runner import run_packet, scaled_scenario
    sc = scenario if isinstance(scenario, scenarios.Scenario) else scenarios.load(scenario)
    sc = scaled_scenario(sc, capacity_scale)
    t_end = sc.duration_s if t_end_s is None else float(t_end_s)
    params = dict(sc.params)
    params.update(overrides or {})
    w = min(sc.summary_window_s or 0.1 * t_end, t_end)
    fl = simulate(sc.network, sc.model, t_end_s=t_end, output_dt_s=min(sc.output_dt_s or bin_s, bin_s),
                  summary_window_s=w, name=sc.name, progress=progress,
                  **{"load_rtt": sc.load_rtt, "past": sc.past, "rtt_includes_queueing": sc.rtt_includes_queueing,
                     **(fluid_kwargs or {})}, **params)
    pk = run_packet(sc, protocol=protocol, t_end_s=t_end, bin_s=bin_s, seed=seed, overrides=overrides,
                    progress=progress, python=python, symbiosis_tau=symbiosis_tau)
    c = build_comparison(sc, fl, pk, capacity_scale=capacity_scale, with_paper=abs(t_end - sc.duration_s) < 1e-9)
    if abs(t_end - sc.duration_s) >= 1e-9:
        from .paper import PAPER
        if sc.name in PAPER:
            c.notes.append(f"the paper's numbers are left out: they describe the scenario's {sc.duration_s:g} s run, "
                           f"this one ends at {t_end:g} s")
    return c
