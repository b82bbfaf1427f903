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
