"""Max-min fair allocation by progressive filling (water-filling), sparse."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def max_min_fair(routing, capacity_pps):
    """Max-min fair rates for a routing matrix (links x flows, sparse or dense).

    Returns ``(rates_pps, saturated_links)``.  Capacities that are NaN
    (time-varying cross traffic) give NaN rates for the flows crossing them.
    Each round saturates at least one link, so at most ``n_links`` rounds of
    sparse products.
    """
    R = sp.csr_matrix(routing, dtype=float)
    R.data[:] = 1.0
    Rt = R.T.tocsr()
    cap = np.asarray(capacity_pps, dtype=float).copy()
    L, P = R.shape
    rates = np.zeros(P)
    bad = np.isnan(cap)
    unknown = (Rt @ bad.astype(float)) > 0
    cap[bad] = np.inf
    frozen = unknown.copy()
    saturated = np.zeros(L, dtype=bool)
    remaining = cap.copy()
    while not frozen.all():
        n_act = R @ (~frozen).astype(float)
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
        frozen |= (Rt @ tight.astype(float)) > 0
    rates[unknown] = np.nan
    return rates, saturated
