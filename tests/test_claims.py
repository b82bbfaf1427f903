"""The claims ledger: verdicts backed by the runs they cite.

Expected values here are derived independently of the ledger code (by hand
from the papers' equations), not copied from its output.
"""
import math

import pytest

from ecocc import claims
from ecocc.units import mbps_to_pps


def one(cid):
    (r,) = claims.evaluate([cid])
    assert r.verdict in claims.VERDICTS
    return r


def test_aecp_equilibrium_confirmed():
    r = one("aecp.eq16")
    assert r.verdict == "confirmed"
    # C/N for 500 Mbps at 1000-byte packets and N = 4: 62500/4 packets/s
    assert r.analytic["x_star_pps"] == pytest.approx(62500 / 4)


def test_aecp_parking_lot_confirmed():
    assert one("aecp.sec6.3").verdict == "confirmed"


def test_aecp_rtt_independence_contradicted():
    r = one("aecp.thm1.rtt")
    assert r.verdict == "contradicted"
    # below the critical delay (0.6435 s from the exact-delay loop) the run settles
    assert r.numeric["rtt_0.4s"]["queue_peak_to_peak_150_200s_pkts"] < 1.0
    # well above it the queue keeps swinging by thousands of packets
    assert r.numeric["rtt_1.2s"]["queue_peak_to_peak_150_200s_pkts"] > 1000


def test_aecp_fairness_time_follows_corrected_formula():
    r = one("aecp.thm3")
    # eq. (31) g' = -alpha g ln g solves to ln g(t) = ln g(0) exp(-alpha t); with
    # g(0) = C/(N x0) and g(t_eps) = 1/eps: t = ln(ln(C/(N x0)) / ln(1/eps)) / alpha
    C, N, x0, eps, alpha = mbps_to_pps(500, 1000), 3, 10.0, 0.9, 2.0
    t_solved = math.log(math.log(C / (N * x0)) / math.log(1 / eps)) / alpha
    # 2 %: the run has a 50 ms delay and a rate-factor dip the proof ignores; sampling is 1 ms
    assert r.numeric["t_eps_s"] == pytest.approx(t_solved, rel=0.02)
    assert r.verdict == "contradicted"  # eq. (29) as printed gives about half of it


def test_petcp_equilibrium_holds_only_without_delay():
    r = one("petcp.thm1")
    nd, dl = r.numeric["delay_none"], r.numeric["delay_rtt"]
    # q* = a T N / b = 125 * 0.01 * 5 / 1 = 6.25 packets (Theorem 1 and Section 5.1.1)
    assert nd["mean_queue_pkts"] == pytest.approx(6.25, abs=1e-3)
    lo, hi = dl["queue_range_pkts_200_300s"]
    assert hi - lo > 1.0  # with one RTT of feedback delay the queue never settles
    assert r.verdict == "ambiguous"  # holds for eq. (4)-(5) as printed, fails with the feedback delay


def test_symbiosis_queue_confirmed():
    r = one("symbiosis.eq20")
    # (n-1)(1-gamma) K tau / (1+(n-1) gamma) with K tau = 8333.3 pkt/s * 0.06 s = 500 packets
    assert r.analytic["Q_pkts"] == pytest.approx(4 * 0.1 * 500 / 4.6)
    assert r.verdict == "confirmed"


@pytest.mark.slow
def test_full_ledger_runs():
    res = claims.evaluate(include_slow=True)
    assert {r.id for r in res} == set(claims.REGISTRY)


def test_aecp_efficiency_time_violates_the_lower_bound():
    r = one("aecp.thm2")
    # t1 = ln(C/(N x0) * theta/(1-theta)) / beta with C = 62500 pkt/s, N = 4, x0 = 10, theta = 0.99, beta = 1
    t1 = math.log(62500 / 40 * 99)
    assert r.analytic["t1_s"] == pytest.approx(t1)
    # both readings of the initial rate factor reach 99 % efficiency before t1
    assert all(v["t_theta_s"] < t1 for v in r.numeric.values())
    assert r.verdict == "contradicted"


def test_symbiosis_growth_time_confirmed():
    r = one("symbiosis.eq12")
    # alone on the link A = K: eq. (12) reduces to the logistic time ln(rho/(1-rho) (w*-w0)/w0)/eps
    K = 100e6 / (8 * 1500)
    w0, ws = 10.0 * 0.06, K * 0.06
    assert r.analytic["T_s"] == pytest.approx(math.log(99 * (ws - w0) / w0) / 1.95)
    assert r.verdict == "confirmed"


def test_symbiosis_eps_limit_with_five_connections():
    r = one("symbiosis.sec3C.eps")
    crit = r.analytic["critical_eps_per_s_by_n"]
    assert crit["1"] is None and crit["2"] is None  # no limit for 1 or 2 connections (gamma (n-1) <= 1)
    assert 25.0 < crit["5"] < 35.0  # the two runs bracket it
    assert r.verdict == "contradicted"
