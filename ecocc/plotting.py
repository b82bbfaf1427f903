"""Figures from result objects (never from inside solvers)."""
from __future__ import annotations

import numpy as np



def plot_trajectory(tr, fig=None):
    """Rates (Mbps), queues (packets), utilization and Jain's index.

    Returns the figure; axes are ``fig.axes``.
    """
    import matplotlib.pyplot as plt

    if fig is None:
        fig = plt.figure(figsize=(10, 8), layout="constrained")
    axs = fig.subplots(3, 1, sharex=True)
    for j, nm in enumerate(tr.flow_names):
        r = np.where(tr.active[:, j], tr.rate_mbps[:, j], np.nan)
        axs[0].plot(tr.t_s, r, label=nm, lw=1.2)
    if len(tr.flow_names) <= 12:
        axs[0].legend(loc="upper right", fontsize="small", ncol=2)
    axs[0].set_ylabel(f"rate (Mbps, {tr.packet_bytes:g}-byte packets)")
    for j, nm in enumerate(tr.link_names):
        axs[1].plot(tr.t_s, tr.queue_pkts[:, j], label=nm, lw=1.2)
    if len(tr.link_names) <= 12:
        axs[1].legend(loc="upper right", fontsize="small")
    axs[1].set_ylabel("queue (packets)")
    tm, u = tr.utilization(bin_s=max((tr.t_s[-1] - tr.t_s[0]) / 400, 1e-3))
    for j, nm in enumerate(tr.link_names):
        axs[2].plot(tm, u[:, j], label=f"utilization {nm}", lw=1.0)
    axs[2].plot(tr.t_s, tr.jain(), "k--", lw=1.0, label="Jain's index (active flows)")
    axs[2].set_ylabel("utilization, fairness (1)")
    axs[2].set_xlabel("time (s)")
    axs[2].legend(loc="lower right", fontsize="small")
    axs[2].set_ylim(-0.05, 1.1)
    status = "" if tr.ok else f"  [status: {tr.status.value}]"
    fig.suptitle(f"{tr.name}: {tr.model}{status}")
    for ax in axs:
        ax.grid(alpha=0.3)
    return fig


def _axis_label(coord) -> str:
    """``long_name (units)`` of a map axis; ``rtt_scale`` reads "RTT scale factor"."""
    name = str(coord.attrs.get("long_name", coord.name))
    if name == "rtt_scale":
        name = "RTT scale factor"
    return f"{name} ({coord.attrs.get('units', '-')})"


def _points(n) -> str:
    return f"{int(n)} point" + ("" if int(n) == 1 else "s")


#: markers of the grid points whose run did not succeed, by status
_STATUS_MARKERS = {"failed": dict(marker="x", color="r", mew=2),
                   "inaccurate": dict(marker="^", color="orange", mfc="none", mew=1.5),
                   "interrupted": dict(marker="s", color="0.5", mfc="none", mew=1.5)}


def plot_simulated_map(ds, ax=None):
    """Plot a :func:`ecocc.batch.simulate_map` dataset.

    Colour: log10 of the largest queue swing over the links (packets, peak to
    peak over the verdict window; swings below 1e-6 packet are clipped).
    The settled region is outlined (contour of ``stable`` at 0.5); every
    point carries the marker of its regime (settled, decaying but not
    settled, growing or limit cycle, not classified), counted in the legend;
    points whose run did not succeed are marked by status.
    Axis labels come from the ``long_name`` and ``units`` of ``x``/``y``.
    Returns the figure.
    """
    import textwrap

    import matplotlib.patheffects as pe
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(7.5, 6), layout="constrained")
    else:
        fig = ax.figure
    x, y = ds["x"].values, ds["y"].values
    swing = ds["queue_swing_pkts"].max(dim="link", skipna=False).values
    z = np.log10(np.clip(swing, 1e-6, None))
    pc = ax.pcolormesh(x, y, z, shading="nearest", cmap="viridis")
    thr = ds.attrs.get("swing_threshold_pkts")
    label = "log10 of largest queue swing over links (packets)"
    mark_thr = thr is not None and np.isfinite(z).any() and np.nanmin(z) <= np.log10(thr) <= np.nanmax(z)
    if mark_thr:
        label += f"\nwhite line: threshold {thr:g} packet(s)"
    cb = fig.colorbar(pc, ax=ax, label=label)
    if mark_thr:
        cb.ax.axhline(np.log10(thr), color="w", lw=2, path_effects=[pe.withStroke(linewidth=3.5, foreground="k")])

    outline = [pe.withStroke(linewidth=4, foreground="k")]
    stable = ds["stable"].values.astype(bool)
    Y, X = np.meshgrid(y, x, indexing="ij")
    handles = []
    if stable.any() and not stable.all() and x.size > 1 and y.size > 1:
        ax.contour(x, y, stable.astype(float), levels=[0.5], colors="w", linewidths=2, path_effects=outline)
        handles.append(Line2D([], [], color="w", lw=2, path_effects=outline, label="boundary of the settled region"))
    if "regime" in ds:
        regime = ds["regime"].values
    else:  # a map written before the regimes: settled or not only
        regime = np.where(stable, 0, np.where(ds["status"].values.astype(str) == "success", -2, -1))
    ok = ds["status"].values.astype(str) == "success"
    styles = {0: ("settled", dict(marker="o", color="w", mec="k", mew=0.6, ms=4)),
              1: ("decaying, not settled", dict(marker="v", color="c", mec="k", mew=0.4, ms=4)),
              2: ("growing or limit cycle", dict(marker="^", color="r", mec="k", mew=0.4, ms=4)),
              -1: ("not classified (decay not measured)", dict(marker="s", color="0.6", mec="k", mew=0.4, ms=4)),
              -2: ("not settled (map without regimes)", dict(marker="s", color="0.6", mec="k", mew=0.4, ms=4))}
    for code, (label, style) in styles.items():
        sel = (regime == code) & ok
        if sel.any() or code in (0, 1, 2):
            if sel.any():
                ax.plot(X[sel], Y[sel], ls="", **style)
            handles.append(Line2D([], [], ls="", **style, label=f"{label} ({_points(sel.sum())} of {stable.size})"))

    status = ds["status"].values.astype(str)
    for st in sorted(set(status.ravel()) - {"success"}):
        sel = status == st
        style = _STATUS_MARKERS.get(st, dict(marker="D", color="m", mfc="none", mew=1.5))
        ax.plot(X[sel], Y[sel], ls="", ms=8, **style)
        handles.append(Line2D([], [], ls="", ms=8, **style, label=f"run {st} ({_points(sel.sum())})"))

    ax.set_xlabel(_axis_label(ds["x"]))
    ax.set_ylabel(_axis_label(ds["y"]))
    head = f"Stability by simulation: scenario {ds.attrs.get('scenario', '?')}, model {ds.attrs.get('model', '?')}"
    verdict = str(ds.attrs.get("verdict", ""))
    lines = textwrap.wrap(head, 90) + textwrap.wrap(verdict[:1].upper() + verdict[1:], 90)
    if "decay_ratio" in ds.attrs:
        w = float(ds.attrs.get("window_s", float("nan")))
        lines += textwrap.wrap(f"Decaying: the swing shrinks by at least {100 * (1 - float(ds.attrs['decay_ratio'])):g} % "
                               f"from one {w:g} s window to the last", 90)
    ax.set_title("\n".join(lines), fontsize=9)
    if own:  # legend below the axes, off the map
        fig.legend(handles=handles, loc="outside lower center", ncol=min(3, len(handles)), fontsize=8)
    else:
        ax.legend(handles=handles, loc="best", fontsize=8, framealpha=0.9)
    return fig

