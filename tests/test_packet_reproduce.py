"""``ecocc reproduce --level packet|both`` and reverse-path flows at packet level.

The tests without ns-3 (which tasks cannot run at packet level and why, the reverse-flow checks, the CLI
when ns-3 is missing) run in the default suite; the ns-3 runs carry the marker ``packet``
(``pytest -m packet``) and simulate 3 to 20 s at 10 Mbps (each child spends 15-40 s importing ns-3).
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from ecocc import scenarios
from ecocc.errors import InputError
from ecocc.packet import available, build_spec, run_packet
from ecocc.reproduce import Task

_OK, _WHY = available()


def needs_ns3(f):
    """ns-3 runs: marker ``packet`` (not in the default suite), skipped with the reason without ns-3."""
    return pytest.mark.packet(pytest.mark.skipif(not _OK, reason=f"ns-3 not available: {_WHY}")(f))


def dumbbell(n=2, duration_s=10.0):
    """AECP, n flows (RTT 50 ms) on a 10 Mbps bottleneck with a 500-packet buffer."""
    return scenarios.from_dict({
        "scenario": {"name": "rev-dumbbell", "model": "aecp", "duration_s": duration_s,
                     "summary_window_s": duration_s / 2, "output_dt_s": 0.1, "packet_bytes": 1000},
        "links": [{"name": "bottleneck", "capacity_mbps": 10, "buffer_pkts": 500}],
        "flows": [{"name": f"f{i + 1}", "route": ["bottleneck"], "rtt_ms": 50, "initial_rate_pps": 10}
                  for i in range(n)]})


# ----------------------------------------------------------------------------- without ns-3
def test_tasks_without_packet_form_are_named_with_the_reason():
    from ecocc.packet.reproduce import why_not_packet
    why, _ = why_not_packet(Task("aecp-fig10", "xcp"))
    assert "no packet-level xcp" in why
    why, _ = why_not_packet(Task("symbiosis-fig3", "mixed"))
    assert "mixed" in why
    why, _ = why_not_packet(Task("iguchi-fig2", "symbiosis"))
    assert "packet_bytes" in why
    # the budget: petcp-fig3 at 1000 Mbps for 40 s is 125000 pkt/s x 40 s = 5e6 packets
    why, n = why_not_packet(Task("petcp-fig3", "petcp", 1000.0), max_packets=1e6)
    assert "--max-packets" in why and math.isclose(n, 125000 * 40)
    assert why_not_packet(Task("petcp-fig3", "petcp", 1000.0), max_packets=None)[0] is None


def test_reverse_flows_in_the_spec_and_their_errors():
    sc = dumbbell()
    spec = build_spec(sc, reverse_flows=[{"name": "r1", "route": ["bottleneck"], "rtt_ms": 50, "start_s": 1}])
    assert [f["name"] for f in spec["flows"]] == ["f1", "f2", "r1"]
    assert spec["flows"][-1]["reverse"] is True and spec["flows"][-1]["rtt_s"] == 0.05
    for bad, field in (([{"route": ["nosuch"], "rtt_ms": 50}], "reverse_flows[0].route"),
                       ([{"name": "f1", "route": ["bottleneck"], "rtt_ms": 50}], "reverse_flows[0].name"),
                       ([{"route": ["bottleneck"]}], "reverse_flows[0].rtt_ms"),
                       ([{"route": ["bottleneck"], "rtt_ms": 50, "colour": 1}], "reverse_flows[0]")):
        with pytest.raises(InputError) as exc:
            build_spec(sc, reverse_flows=bad)
        assert exc.value.field == field


def test_cli_packet_level_without_ns3_lists_every_run_with_the_reason(tmp_path, monkeypatch):
    from ecocc.cli import main
    monkeypatch.setenv("ECOCC_NS3_PYTHON", str(tmp_path / "no-such-python"))
    r = CliRunner().invoke(main, ["reproduce", "petcp-fig3", "--level", "packet", "--out", str(tmp_path / "o"),
                                  "--json", "--no-figures", "--max-packets", "0"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    # petcp-fig3: one protocol at 5 bandwidths, none runnable without ns-3, every one listed
    assert len(out["packet_skipped"]) == 5
    assert all("ns-3 not available" in v for v in out["packet_skipped"].values())
    assert out["records"] and all(rec["packet"] is None for rec in out["records"])


# ----------------------------------------------------------------------------- ns-3 runs
@needs_ns3
def test_reverse_path_flows_share_each_direction():
    n = 2
    # 20 s: from x0 = 10 pkt/s the queue overshoots q0 and drains for several seconds (over 5-10 s every flow
    # still sent 591 pkt/s, measured); the second half, 10-20 s, is past that
    tr = run_packet(dumbbell(n, 20.0),
                    reverse_flows=[{"name": f"r{i + 1}", "route": ["bottleneck"], "rtt_ms": 50} for i in range(n)])
    assert tr.ok, tr.message
    assert tr.flow_names == ["f1", "f2", "r1", "r2"]
    # Independent expectation: each direction carries n data flows and the other direction's n ACK streams
    # (one 48-byte ACK per 1000-byte data packet); the router of each direction drives its arrivals to C
    # (eq. 16 of 004), so every flow sends x* = C / (n (1 + 48/1000)).
    C = 1250.0
    x_star = C / (n * (1 + 48 / 1000))
    w = (10.0, 20.0)
    t = tr.t_s
    rates = [(np.interp(w[1], t, tr.sent_pkts[:, j]) - np.interp(w[0], t, tr.sent_pkts[:, j])) / (w[1] - w[0])
             for j in range(2 * n)]
    # +-1/T2 = 10 pkt/s on the router's measured arrival rate, shared by n flows (see test_packet.py's AECP test)
    tol = (1 / 0.1) / n
    assert all(abs(x - x_star) <= tol for x in rates), (rates, x_star)
    rev_dep = tr.link_vars["reverse_departed"][:, 0]
    assert rev_dep[-1] > 0 and np.all(np.diff(rev_dep) >= 0)  # the reverse direction carried the reverse data


@needs_ns3
def test_reproduce_packet_runs_resumes_and_lists_the_rest(tmp_path, monkeypatch):
    import ecocc.reproduce as R
    from ecocc.packet.reproduce import reproduce_packet, side_by_side
    real = R.variant

    def short(sc, protocol, at=None):  # 3 s simulated instead of 40 s: a test, not the paper's run
        net, params, _ = real(sc, protocol, at)
        return net, params, 3.0
    monkeypatch.setattr(R, "variant", short)
    # petcp-fig3 at 10/50/100/500/1000 Mbps x 3 s: 3750 ... 375000 packets; a 5000-packet budget runs 10 Mbps only
    recs, res, timing = reproduce_packet("petcp-fig3", tmp_path / "pk", max_packets=5000)
    ran = [k for k, v in res.items() if v["status"] != "skipped"]
    assert ran == ["petcp-fig3/petcp@10"] and res[ran[0]]["status"] == "success", res[ran[0]].get("message")
    assert timing["n_skipped"] == 4 and all("--max-packets" in v["message"] for v in res.values()
                                            if v["status"] == "skipped")
    assert (tmp_path / "pk" / "petcp-fig3.png").exists() and (tmp_path / "pk" / "petcp-fig3.pdf").exists()
    # the number in the record is the mean queue of the stored run over its summary window
    rec = [r for r in recs if r.quantity == "queue_pkts" and "=10" in r.where][0]
    run = R.Run(res[ran[0]])
    assert rec.ecocc == run.measure("queue_pkts") and math.isfinite(rec.ecocc)
    rows = side_by_side(None, recs)
    assert rows[0].packet == rec.ecocc and math.isnan(rows[0].fluid)
    # a rerun reuses the stored run: nothing runs
    recs2, res2, timing2 = reproduce_packet("petcp-fig3", tmp_path / "pk", max_packets=5000, figures=False)
    assert timing2["n_runs"] == 0 and timing2["n_reused"] == 1
    assert [r.ecocc for r in recs2 if math.isfinite(r.ecocc)] == [r.ecocc for r in recs if math.isfinite(r.ecocc)]
