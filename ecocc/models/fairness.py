"""Max-min fair allocation by progressive filling (water-filling)."""
from __future__ import annotations

import numpy as np


def max_min_fair_pairs(pair_link, pair_flow, n_links, n_flows, capacity_pps):
    """Max-min fair rates for ``n_flows`` flows given as (link, flow) pairs, each pair once.

    Progressive filling: all unfrozen flows grow at the same pace until a link
    saturates; the flows crossing it are frozen.  Capacities that are NaN
    (time-varying cross traffic) give NaN rates for the flows crossing them.
    Each round saturates at least one link, so at most ``n_links`` rounds of
    O(pairs) work.

    Parameters
    ----------
    pair_link, pair_flow : array_like of int
        Link index and flow index of each (link, flow) pair of the routing.
    n_links, n_flows : int
        Number of links and flows.
    capacity_pps : array_like
        Capacity left to the flows on each link (packets/s), NaN where unknown.

    Returns
    -------
    rates_pps : ndarray
        Max-min fair rate of each flow (packets/s); NaN for flows crossing a NaN capacity, ``inf``
        for flows crossing no finite-capacity link.
    saturated_links : ndarray of bool
        Links whose capacity the allocation uses up.
    """
    pl = np.asarray(pair_link, dtype=np.int64)
    pf = np.asarray(pair_flow, dtype=np.int64)
    L, P = int(n_links), int(n_flows)

    def per_link(flow_mask):  # routing @ mask: flows of the mask on each link
        return np.bincount(pl, weights=flow_mask[pf].astype(float), minlength=L)

    def any_link(link_mask):  # (routing.T @ mask) > 0: flows crossing a link of the mask
        return np.bincount(pf, weights=link_mask[pl].astype(float), minlength=P) > 0

    cap = np.asarray(capacity_pps, dtype=float).copy()
    rates = np.zeros(P)
    bad = np.isnan(cap)
    unknown = any_link(bad)
    cap[bad] = np.inf
    frozen = unknown.copy()
    saturated = np.zeros(L, dtype=bool)
    remaining = cap.copy()
    while not frozen.all():
        n_act = per_link(~frozen)
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(n_act > 0, remaining / n_act, np.inf)
        inc = share.min()
        if not np.isfinite(inc):
            rates[~frozen] = np.inf
            break
        rates[~frozen] += inc
        remaining -= inc * n_act
        tight = (n_act > 0) & (remaining <= 1e-12 * np.maximum(cap, 1.0))
        saturated |= tight
        frozen |= any_link(tight)
    rates[unknown] = np.nan
    return rates, saturated
