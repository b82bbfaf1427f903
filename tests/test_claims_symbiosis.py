"""TCP Symbiosis (002): the equilibrium for unequal K_i, the ledger records, the proofs."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ecocc.models import get_model
from ecocc.network import CrossTraffic, dumbbell
from ecocc.simulate import simulate

ROOT = Path(__file__).resolve().parents[1]

# ---------------------------------------------------------------------------
# Symbiosis.equilibrium() for unequal physical bandwidths, against runs
# ---------------------------------------------------------------------------

C = 1000.0  # packets/s
EQ_CASES = {
    # name: (rtts_s, K_pps, cross_pps, available)
    "uncapped, queue": ([0.2, 0.4], [400.0, 1000.0], 0.0, "paper"),
    "all capped by access K": ([0.2, 0.4], [200.0, 300.0], 0.0, "paper"),
    "one flow dies out": ([0.2, 0.3, 0.4], [100.0, 1000.0, 1000.0], 0.0, "paper"),
    "cross traffic": ([0.3, 0.2], [500.0, 800.0], 300.0, "paper"),
    "measured available": ([0.2, 0.4], [400.0, 1000.0], 0.0, "measured"),
}


@pytest.mark.parametrize("case", list(EQ_CASES))
def test_equilibrium_unequal_K_matches_run(case):
    rtts, K, cross, avail = EQ_CASES[case]
    cr = [CrossTraffic("bottleneck", rate_pps=cross)] if cross else []
    net = dumbbell(C, rtts, physical_bw_pps=K, initial_rate_pps=10.0, cross_traffic=cr)
    m = get_model("symbiosis")
    P = m.make_params(available=avail)
    eq = m.equilibrium(net, P)
    assert np.all(eq["rate_pps"] >= 0) and np.all(eq["window_pkts"] >= 0)
    tr = simulate(net, m, P, t_end_s=150.0, summary_window_s=10.0, rtol=1e-6)
    assert tr.ok, tr.message
    s = tr.summary()
    rates = np.array([f["mean_rate_pps"] for f in s["flows"]])
    q = s["links"][0]["mean_queue_pkts"]
    # the slowest mode decays at eps (1 - gamma)/(1 + (n-1) gamma) ~ 0.07 /s and better (measured residue
    # <= 2e-6 relative at 140-150 s for the 2-flow cases); 1e-3 of C (1 pkt/s) covers the 3-flow case, whose
    # dying flow decays at 0.73 /s from 10 pkt/s (below 1e-40 by 140 s)
    np.testing.assert_allclose(rates, eq["rate_pps"], atol=1.0, rtol=0)
    assert abs(q - eq["queue_pkts"][0]) < 0.05  # packets: same residue times the window scale (~100 pkts)
