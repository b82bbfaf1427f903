"""Iguchi, Hasegawa & Murata (003): ledger records and the proof script."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import ecocc.claims.iguchi as I
from ecocc.claims.base import REGISTRY

ROOT = Path(__file__).resolve().parents[1]


def _rec(cid):
    return REGISTRY[cid].check(None)


def test_proof_script_pinpoints_eq6_and_the_continuous_logistic():
    spec = importlib.util.spec_from_file_location("iguchi_derivations", ROOT / "proofs" / "iguchi_derivations.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    res = mod.main(verbose=False)
    assert {k for k, (ok, _) in res.items() if not ok} == {"eq6", "sec2.1.continuous_no_limit"}
    assert res["sec3.ack.multiplier"][0] and res["sec3.ack.A_gain"][0]
    assert set(mod.DIMS) == set(res)  # every step carries a dimension check
    # eq. (6): dw/d(rtt) is packets, its right-hand side (eps in 1/s) packets/s; 'eps < 2' compares 1/s with 2
    assert {k for k, (ok, _) in mod.DIMS.items() if not ok} == {"eq6", "sec2.1.continuous_no_limit"}


def test_fig1_is_the_discrete_map():
    from ecocc.models.ecology import LogisticParams, discrete_logistic, logistic_solution
    t = np.linspace(0, 40, 4001)
    for e in (1.8, 2.4, 3.0):
        x = logistic_solution(t, LogisticParams(r_per_s=e, K=100.0, x0=1.0))
        assert x.max() <= 100 and abs(x[-1] - 100) < 1e-6  # continuous: monotone, converges for every eps
    d = discrete_logistic(2.4, 100.0, 1.0, 400)
    assert d[-20:].max() - d[-20:].min() > 50  # a 2-cycle (64 <-> 119): does not converge
    assert discrete_logistic(1.8, 100.0, 1.0, 400).max() > 100  # overshoot at 1.8
    r = _rec("iguchi.fig1")
    assert r.verdict == "fails" and r.corrected["verdict"] == "holds"


def test_eq2_one_inequality_is_not_enough():
    r = _rec("iguchi.eq2")
    assert r.verdict == "fails"
    bad = [x for x in r.evidence["rows"] if x["one_condition_met"] and not x["both_met"]]
    assert bad and not any(x["both_survive"] for x in bad)


def test_per_ack_round_map_closed_form():
    # one round of per-ACK increments, applied ACK by ACK, equals the closed form used by per_ack_run
    K, tau, A, eps, g = I.pps(10), 0.05, I.pps(4), 1.95, 0.9
    ws = (K - g * (K - A)) * tau
    w = 7.0
    x = w
    for _ in range(7):  # w = 7 ACKs
        x += eps * (1 - (x + g * tau * (K - A)) / (K * tau))
    assert x == pytest.approx(ws - (ws - w) * (1 - eps / (K * tau)) ** 7, rel=1e-12)


def test_per_ack_stability_boundary_and_default_eps_counterexample():
    r = _rec("iguchi.sec3.stability")
    rows = {(x["lag_rtts"], x["n"]): x for x in r.evidence["rows"]}
    # eps = 1.95 per RTT: converges for 1-3 flows, diverges for 5 with a one-RTT-old A, converges with lag 0
    assert rows[(1, 2)]["converges"] and rows[(1, 3)]["converges"]
    assert not rows[(1, 5)]["converges"] and rows[(0, 5)]["converges"]
    chk = r.corrected["boundary_check"]["n5_lag1"]
    assert chk["dev_at_0.9crit"] < 0.0025 < 0.05 < chk["dev_at_1.1crit"]  # 5 % start: decayed / grown
    assert r.verdict == "fails" and r.corrected["verdict"] == "holds"


def test_fig6_lag1_oscillates_without_loss():
    r = _rec("iguchi.fig6")
    assert r.evidence["lag1"]["window_swing_450_500s"] > 0.1  # sustained oscillation (61 % measured)
    assert r.evidence["lag0"]["window_swing_450_500s"] < 1e-6  # converged to the equal share
    assert not r.evidence["lag1"]["lost"]  # the backlog stays below the 2-BDP buffer


def test_fig4_fig5():
    r4 = _rec("iguchi.fig4")
    assert r4.verdict == "holds" and r4.evidence["max_queue_pkts"] < r4.evidence["buffer_pkts"]
    r5 = _rec("iguchi.fig5")
    T = r5.evidence["T_s"]
    assert all(a < b for a, b in zip(T, T[1:]))  # grows (logarithmically), not constant
    assert r5.evidence["slope_s"] < 0.2  # s per e-fold of BW: ~1 RTT, vs Reno's proportional growth


@pytest.mark.slow
def test_every_iguchi_record_runs():
    for cid, c in REGISTRY.items():
        if cid.startswith("iguchi."):
            rec = c.check(None)
            assert rec.verdict in ("holds", "approximate", "fails", "not-checkable")
            rec.as_dict()
