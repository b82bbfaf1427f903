"""Max-min fair allocation by progressive filling (water-filling)."""
from __future__ import annotations

import numpy as np


def max_min_fair(routing, capacity_pps):
    """Max-min fair rates for a routing matrix (links x flows).

    Returns ``(rates_pps, saturated_links)``.  Capacities that are NaN
    (time-varying cross traffic) give NaN rates for the flows crossing them.
    """
    R = (routing.toarray() if hasattr(routing, "toarray") else np.asarray(routing)) > 0
    cap = np.asarray(capacity_pps, dtype=float).copy()
    L, P = R.shape
    rates = np.zeros(P)
    bad = np.isnan(cap)
    unknown = R[bad].any(axis=0)
    cap[bad] = np.inf
    frozen = unknown.copy()
    saturated = np.zeros(L, dtype=bool)
    remaining = cap.copy()
    while not frozen.all():
        n_act = R[:, ~frozen].sum(axis=1)
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
        frozen |= R[tight].any(axis=0)
    rates[unknown] = np.nan
    return rates, saturated
