"""The three TCP Symbiosis records of the first ledger (ecocc/claims/_legacy_symbiosis.py).

Drop this file when ecocc/claims/symbiosis.py supersedes those records.
"""
import pytest

from ecocc import claims


def _rec(cid):
    (r,) = claims.evaluate([cid])
    return r


@pytest.mark.slow  # ~50 s: a 300 s Symbiosis run
def test_queue_eq20():
    r = _rec("symbiosis.eq20")
    # (n-1)(1-gamma) K tau / (1+(n-1) gamma) with K tau = 8333.3 pkt/s * 0.06 s = 500 packets
    if "Q_pkts" in r.evidence:
        assert r.evidence["Q_pkts"] == pytest.approx(4 * 0.1 * 500 / 4.6)
    assert r.verdict in ("holds", "approximate")


def test_eps_limit_sec3C():
    r = _rec("symbiosis.sec3C")
    if "critical_eps_per_s_by_n" in r.evidence:
        crit = r.evidence["critical_eps_per_s_by_n"]
        assert crit["1"] is None and crit["2"] is None   # no limit for 1 or 2 connections (gamma (n-1) <= 1)
        assert 25.0 < crit["5"] < 35.0                   # the two runs bracket it
        assert r.verdict == "fails"
