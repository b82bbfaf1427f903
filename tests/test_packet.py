"""Packet-level cross-check in ns-3 (ns-3 runs carry the marker ``packet``: ``pytest -m packet``).

The tests without ns-3 (specification, comparison arithmetic, CLI errors) run in the default suite.

These need the ``packet`` extra (``pip install -e '.[packet]'``); they are skipped, with the
reason, when the ``ns3`` wheel is not importable by the child interpreter (``$ECOCC_NS3_PYTHON``
or this one).  Each ns-3 run is a child process that spends 15-40 s importing ns-3 before it
simulates.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from ecocc import scenarios
from ecocc.packet import available, build_spec, run_packet
from ecocc.packet.comparison import build_comparison, compare

_OK, _WHY = available()


def needs_ns3(f):
    """ns-3 runs: marker ``packet`` (not in the default suite), skipped with the reason without ns-3."""
    return pytest.mark.packet(pytest.mark.skipif(not _OK, reason=f"ns-3 not available: {_WHY}")(f))

C_PPS = 1250.0          # 10 Mbps of 1000-byte packets
RTTS_MS = (50, 100, 200, 400)


def aecp_dumbbell_10mbps(duration_s=60.0):
    """AECP, 4 flows (RTT 50/100/200/400 ms) from t = 0 on a 10 Mbps drop-tail bottleneck (BDP buffer of
    the longest RTT, 500 packets, as the papers' ns-2 runs: buffer = bandwidth x delay)."""
    return scenarios.from_dict({
        "scenario": {"name": "aecp-dumbbell-10mbps", "model": "aecp", "duration_s": duration_s,
                     "summary_window_s": min(20.0, duration_s), "output_dt_s": 0.1, "packet_bytes": 1000},
        "params": {"alpha_per_s": 2.0, "beta_per_s": 1.0, "T_s": 2.0, "q0_pkts": 100.0},
        "links": [{"name": "bottleneck", "capacity_mbps": 10, "buffer_pkts": 500}],
        "flows": [{"name": f"f{i + 1}", "route": ["bottleneck"], "rtt_ms": r, "initial_rate_pps": 10}
                  for i, r in enumerate(RTTS_MS)],
    })


def test_spec_from_every_shipped_scenario():
    # no ns-3 needed: every shipped scenario maps to a packet-level specification
    from ecocc.errors import InputError
    for name in scenarios.shipped():
        sc = scenarios.load(name)
        if sc.network.packet_bytes > 9000:
            # population-unit scenarios (1 packet/s = one individual): refused with the field named
            with pytest.raises(InputError, match="packet_bytes"):
                build_spec(sc)
            continue
        spec = build_spec(sc)
        assert spec["packet_bytes"] in (1000.0, 1500.0)
        assert len(spec["flows"]) == scenarios.load(name).network.n_flows
        for f in spec["flows"]:
            assert all(0 <= i < len(spec["links"]) for i in f["route"])


def test_spec_rejects_impossible_rtt():
    from ecocc.errors import InputError
    sc = scenarios.load("aecp-parking-lot")
    import dataclasses
    bad = dataclasses.replace(sc.network.flows[0], rtt_s=0.05)  # below 2 x (3 x 20 ms)
    net = sc.network.replace(flows=(bad,) + sc.network.flows[1:])
    with pytest.raises(InputError, match="rtt_s"):
        build_spec(dataclasses.replace(sc, network=net))


def test_comparison_of_a_run_with_itself_is_zero():
    # the comparison arithmetic (binning from cumulative counters, RMS, table) on a fluid run against itself
    from ecocc.simulate import simulate
    sc = aecp_dumbbell_10mbps(duration_s=10.0)
    tr = simulate(sc.network, sc.model, t_end_s=10.0, output_dt_s=0.1, summary_window_s=5.0, **sc.params)
    tr.t_s = np.round(tr.t_s, 9)
    c = build_comparison(sc, tr, tr)
    assert all(v["rms_pps"] == 0 for v in c.rms["flows"].values())
    assert all(v["rms_queue_pkts"] == 0 for v in c.rms["links"].values())
    for r in c.rows:
        if isinstance(r["fluid"], float) and isinstance(r["packet"], float):
            assert r["fluid"] == r["packet"], r
    assert "rate f1" in c.format_table() and c.format_markdown().startswith("| quantity")


def test_cli_packet_without_ns3_is_one_line_error(tmp_path):
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, "-m", "ecocc.cli", "packet", "aecp-dumbbell", "--out", str(tmp_path),
                           "--python", str(tmp_path / "no-such-python")], capture_output=True, text=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "cannot start" in proc.stderr


@pytest.mark.parametrize("command", ["packet", "compare"])
def test_cli_packet_unknown_scenario_reported_before_missing_ns3(tmp_path, command):
    # a missing interpreter (no ns-3) and an unknown scenario: the scenario is the first thing wrong
    from click.testing import CliRunner
    from ecocc.cli import main
    r = CliRunner().invoke(main, [command, "nosuch", "--out", str(tmp_path), "--python",
                                  str(tmp_path / "no-such-python")])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "nosuch" in r.output and "cannot start" not in r.output


@needs_ns3
def test_aecp_dumbbell_steady_state_matches_fluid_equilibrium():
    sc = aecp_dumbbell_10mbps()
    tr = run_packet(sc)
    assert tr.ok, tr.message
    s = tr.summary()
    N = 4
    # Independent expectation: eq. (16) of 001/004, x* = r* = C/N and q* = q0 (the fluid equilibrium).
    x_star, q0 = C_PPS / N, 100.0
    eq = tr.equilibrium  # the fluid model's own equilibrium (ecocc.models.aecp.AECP.equilibrium)
    assert np.allclose(eq["rate_pps"], x_star) and np.allclose(eq["queue_pkts"], q0)
    # Tolerances from the sampling.  The router knows the arrival rate y only as a packet count per
    # T2 = 0.1 s interval: +-1 packet per interval, i.e. +-1/T2 = 10 pkt/s on y.  In eq. (49) that
    # uncertainty on y is equivalent to +-T/T2 = 2 s / 0.1 s = 20 packets on q, and, shared by N flows
    # that all follow the same r, to +-10/N = 2.5 pkt/s on each rate.
    rate_tol_pps = (1 / 0.1) / N
    queue_tol_pkts = 2.0 / 0.1
    for f in s["flows"]:
        assert abs(f["mean_rate_pps"] - x_star) <= rate_tol_pps, f
    lk = s["links"][0]
    assert abs(lk["mean_queue_pkts"] - q0) <= queue_tol_pkts, lk
    # no loss once converged, and the link full: sum of rates = C within the same +-10 pkt/s
    assert lk["lost_pkts"] == 0
    assert abs(sum(f["mean_rate_pps"] for f in s["flows"]) - C_PPS) <= 1 / 0.1
    print(f"AECP packet level: rates {[round(f['mean_rate_pps'], 2) for f in s['flows']]} pkt/s "
          f"(C/N = {x_star}), queue {lk['mean_queue_pkts']:.2f} pkt (q0 = {q0}), wall {tr.solver['wall_s']:.1f} s")


@needs_ns3
def test_reno_rtt_unfairness_where_the_fluid_model_predicts_it():
    # reno-dumbbell (RTT 50/100/200/400 ms, RED 50-550 packets, buffer 1000) at 10 Mbps
    cmp = compare("reno-dumbbell", capacity_scale=0.1)
    assert cmp.fluid.ok and cmp.packet.ok
    w = cmp.packet.summary_window_s
    xf = np.array([f["mean_rate_pps"] for f in cmp.fluid.summary(window_s=w)["flows"]])
    xp = np.array([f["mean_rate_pps"] for f in cmp.packet.summary(window_s=w)["flows"]])
    # The fluid Reno model's RTT unfairness: x_i = W_i / R_i with one loss probability on the shared link, so
    # rates fall with the RTT; a fair protocol would give a ratio of 1.  Both runs must order the rates by RTT
    # and give the shortest-RTT flow more than twice the longest-RTT flow's rate (the propagation RTTs differ by
    # 8x; a queueing delay below 0.35 s keeps (0.4 + d)/(0.05 + d) above 2).
    assert np.all(np.diff(xf) < 0), xf
    assert np.all(np.diff(xp) < 0), xp
    assert xf[0] / xf[-1] > 2 and xp[0] / xp[-1] > 2
    row = [r for r in cmp.rows if r["quantity"].startswith("rate ratio")]
    assert row and math.isclose(row[0]["fluid"], xf[0] / xf[-1]) and math.isclose(row[0]["packet"], xp[0] / xp[-1])
    print(cmp.format_table())


@needs_ns3
def test_packet_sweep_through_local_worker_processes(tmp_path):
    # two AECP packet runs through the sweep machinery (ecocc.sweeps, ProcessPoolExecutor, one ns-3 child each)
    from ecocc.sweeps import run_sweep
    toml = tmp_path / "aecp-10mbps.toml"
    toml.write_text('[scenario]\nname = "aecp-10mbps"\nmodel = "aecp"\nduration_s = 30\nsummary_window_s = 10\n'
                    'packet_bytes = 1000\n[[links]]\nname = "bottleneck"\ncapacity_mbps = 10\nbuffer_pkts = 500\n'
                    '[[flows]]\nname = "f"\ncount = 2\nroute = ["bottleneck"]\nrtt_ms = 100\n')
    res = run_sweep(str(toml), {"q0_pkts": [50.0, 150.0]}, tmp_path / "out", workers=2, engine="ns3", progress=False)
    assert res.complete and res.n_failed == 0
    q = res.dataset["mean_queue_pkts"].values
    # the queue follows the target q0 of each point; same sampling tolerance as above: T/T2 = 20 packets
    assert np.all(np.abs(q - np.array([50.0, 150.0])) <= 2.0 / 0.1), q
    assert np.all(res.dataset["utilization"].values > 0.99)  # the link stays full: y + (q - q0)/T = C, q stationary


@needs_ns3
def test_packet_sweep_through_a_dask_local_cluster(tmp_path):
    # the same two AECP packet runs on a dask.distributed LocalCluster (2 worker processes, one thread each):
    # run_sweep's scheduler path, each worker starting its own ns-3 child from a clean directory
    distributed = pytest.importorskip("dask.distributed")
    from ecocc.sweeps import run_sweep
    toml = tmp_path / "aecp-10mbps.toml"
    toml.write_text('[scenario]\nname = "aecp-10mbps"\nmodel = "aecp"\nduration_s = 30\nsummary_window_s = 10\n'
                    'packet_bytes = 1000\n[[links]]\nname = "bottleneck"\ncapacity_mbps = 10\nbuffer_pkts = 500\n'
                    '[[flows]]\nname = "f"\ncount = 2\nroute = ["bottleneck"]\nrtt_ms = 100\n')
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cl:
        res = run_sweep(str(toml), {"q0_pkts": [50.0, 150.0]}, tmp_path / "out", scheduler=cl.scheduler_address,
                        engine="ns3", progress=False)
    assert res.complete and res.n_run == 2 and res.n_failed == 0
    q = res.dataset["mean_queue_pkts"].values
    # as in the local-process sweep: the queue follows each point's q0 within the sampling tolerance T/T2 = 20 packets
    assert np.all(np.abs(q - np.array([50.0, 150.0])) <= 2.0 / 0.1), q
    assert np.all(res.dataset["utilization"].values > 0.99)
    # the points' records name the packet back end: they are ns-3 runs, not fluid ones
    import json
    recs = [json.loads(p.read_text()) for p in (tmp_path / "out" / "points").glob("*.json")]
    assert len(recs) == 2 and all(r["key_inputs"]["engine"] == "ns3" for r in recs)


@needs_ns3
def test_ns3_cubic_baseline_keeps_a_bdp_buffered_link_busy():
    # ns-3's own TcpCubic through the same runner: 2 flows, RTT 100 ms, 10 Mbps, buffer = 1 BDP (125 packets)
    sc = scenarios.from_dict({
        "scenario": {"name": "cubic-10mbps", "model": "reno", "duration_s": 40.0, "summary_window_s": 20.0,
                     "packet_bytes": 1000},
        "params": {"aqm": "droptail"},
        "links": [{"name": "bottleneck", "capacity_mbps": 10, "buffer_pkts": 125}],
        "flows": [{"name": "f", "count": 2, "route": ["bottleneck"], "rtt_ms": 100}],
    })
    tr = run_packet(sc, protocol="cubic")
    assert tr.ok and tr.solver["driver_protocol"] == "tcp:ns3::TcpCubic"
    s = tr.summary()
    # Cubic cuts its window to beta = 0.7 of it on a loss; the link stays busy through the cut when the buffer
    # holds (1 - beta)/beta = 0.43 BDP or more, and it holds 1 BDP.  Utilization over the final 20 s >= 0.95
    # leaves 5 % for the slow-start overshoot losses and any retransmission timeout in the window.
    assert s["links"][0]["utilization"] >= 0.95, s["links"][0]
    assert all(f["mean_rate_pps"] > 0 for f in s["flows"])


def test_spec_rejects_a_route_that_is_not_the_fewest_hop_path():
    from ecocc.errors import InputError
    # routers Z -z-> A -a-> R -b-> B -y-> Y and a shortcut A -c-> B (f2): f1's route z, a, b, y has 4 hops where
    # z, c, y has 3, so ns-3's global routing (fewest hops) would carry f1 over c
    sc = scenarios.from_dict({
        "scenario": {"name": "detour", "model": "aecp", "duration_s": 1.0},
        "links": [{"name": n, "capacity_pps": 100.0} for n in ("z", "a", "b", "c", "y")],
        "flows": [{"name": "f1", "route": ["z", "a", "b", "y"], "rtt_s": 0.1},
                  {"name": "f2", "route": ["z", "c", "y"], "rtt_s": 0.1}],
    })
    with pytest.raises(InputError, match=r"flow\[f1\].route.*fewest hops are 3 over 1 path"):
        build_spec(sc)


# --- packet-level readings of the claims ledger (ecocc.claims._packet) ------------------------------------------

def test_claims_packet_reading_says_why_it_did_not_run(monkeypatch):
    # no ns-3 run, no verdict: the reading is not-checkable and names the reason (here: switched off)
    from ecocc.claims import _packet
    from ecocc.claims.petcp import _fig3_packet_readings
    monkeypatch.setenv("ECOCC_CLAIMS_PACKET", "off")
    ev, why = _packet.packet_evidence("test", {}, (0.0, 1.0))
    assert ev is None and "ECOCC_CLAIMS_PACKET=off" in why
    rd = _fig3_packet_readings()
    assert [r.verdict for r in rd] == ["not-checkable", "not-checkable"]
    assert all(r.detail.startswith("packet check not run: packet-level checks are switched off") for r in rd)
    # an interpreter without the wheel: the reason from ecocc.packet.available()
    monkeypatch.setenv("ECOCC_CLAIMS_PACKET", "on")
    monkeypatch.setenv("ECOCC_NS3_PYTHON", "/no/such/python")
    ev, why = _packet.packet_evidence("test", {}, (0.0, 1.0))
    assert ev is None and "cannot start /no/such/python" in why
    assert _packet.combine(["holds", "not-checkable"]) == "not-checkable"
    assert _packet.combine(["holds", "not-checkable", "fails"]) == "fails"


@needs_ns3
def test_claims_petcp_fig3_packet_readings_from_ns3(monkeypatch, tmp_path):
    # Fig. 3's 10 Mbps point in ns-3 (the paper's bandwidth: no scaling), buffers 12 and 13 packets
    from ecocc.claims.petcp import _fig3_packet_readings
    monkeypatch.setenv("ECOCC_CLAIMS_PACKET", "on")
    monkeypatch.setenv("ECOCC_CLAIMS_CACHE", str(tmp_path))
    rd = _fig3_packet_readings()
    assert len(rd) == 6 and all(r.verdict in ("holds", "fails") for r in rd)
    for buf, (rq, ru, rl) in zip((12, 13), (rd[:3], rd[3:])):
        ev = rq.evidence["packet"]
        assert ev["buffers_pkts"] == [buf]
        # the verdicts follow the run's numbers with the thresholds the fluid readings use
        assert rq.verdict == ("holds" if abs(ev["mean_queue_pkts"][0] - 7) <= 1 else "fails")
        assert ru.verdict == ("holds" if ev["utilization"][0] >= 0.99 else "fails")
        assert rl.verdict == ("holds" if ev["lost_pkts_run"][0] == 0 else "fails")
        # physical bounds, independent of the protocol: a drop-tail queue of `buf` packets has a mean queue in
        # [0, buf]; the link cannot carry more than C (utilization <= 1 within one packet per 20 s window)
        assert 0 <= ev["mean_queue_pkts"][0] <= buf
        assert ev["utilization"][0] <= 1 + 1 / (1250 * 20)
        # goodput <= sending rate per flow (a rate-based sender does not retransmit: lost packets are gone), up to
        # the packets in flight at the window's edges: at most buffer + C x RTT = buf + 62.5 packets over 20 s
        assert all(g <= x + (buf + 62.5) / 20 for g, x in zip(ev["goodput_pps"], ev["send_rate_pps"]))
    # the second call reads the cache (same scenario, same C++): the same numbers
    again = _fig3_packet_readings()
    assert [r.detail for r in again] == [r.detail for r in rd]


def test_ns3_sweep_point_keys_cover_the_packet_code(monkeypatch):
    # a resumed ns-3 sweep must not reuse points computed by other packet code (store.code_version covers the
    # fluid code only): the key of an ns3 point carries ecocc.packet.runner.code_digest, C++ included
    from ecocc.packet import runner
    from ecocc.sweeps import point_key
    sc = aecp_dumbbell_10mbps(duration_s=10.0)
    k1, rec = point_key(sc, {"q0_pkts": 50.0}, 10.0, "ns3")
    assert rec["packet_code"] == runner.code_digest()
    monkeypatch.setattr(runner, "code_digest", lambda: "edited-c++")
    k2, _ = point_key(sc, {"q0_pkts": 50.0}, 10.0, "ns3")
    assert k2 != k1
    # fluid points do not depend on the packet code
    assert "packet_code" not in point_key(sc, {"q0_pkts": 50.0}, 10.0, "numpy")[1]


def test_claims_long_packet_runs_need_all_or_the_cache(monkeypatch, tmp_path):
    # a long ns-3 run (cltcp.fig6 at 120 Mbps) runs only with ECOCC_CLAIMS_PACKET=all; otherwise the cached
    # result is used if there is one, and the reading says how to run it if not (no ns-3 needed for this)
    import ecocc.packet
    from ecocc.claims import _packet
    from ecocc.claims.base import cached
    monkeypatch.setattr(ecocc.packet, "available", lambda python=None: (True, "ok"))
    monkeypatch.setenv("ECOCC_CLAIMS_PACKET", "on")
    monkeypatch.setenv("ECOCC_CLAIMS_CACHE", str(tmp_path))
    sc = {"scenario": {"name": "x"}}
    ev, why = _packet.packet_evidence("t.heavy", sc, (0.0, 1.0), heavy_min=20)
    assert ev is None and "ECOCC_CLAIMS_PACKET=all" in why
    planted = {"status": "success", "message": "ok", "lost_pkts_run": [0.0]}
    cached("t.heavy", lambda: planted, **_packet._key(sc, (0.0, 1.0), None, 1))
    ev, why = _packet.packet_evidence("t.heavy", sc, (0.0, 1.0), heavy_min=20)
    assert ev == planted and why == "ok"


def test_comparison_adds_delivered_rates_when_packets_are_lost():
    # no ns-3: a fluid run that loses packets (AECP, buffer 50 < q0 = 100: the router holds y = C + (q0 - 50)/T,
    # 2 % above C, the excess dropped) stands in for the packet run, with a receiver count of 98 % of what was
    # sent; the table gets a delivered-rate row per flow = 0.98 x that flow's sending rate, and a note
    import dataclasses
    from ecocc.simulate import simulate
    sc = aecp_dumbbell_10mbps(duration_s=20.0)
    net = sc.network.replace(links=tuple(dataclasses.replace(lk, buffer_pkts=50.0) for lk in sc.network.links))
    sc = dataclasses.replace(sc, network=net)
    tr = simulate(net, sc.model, t_end_s=20.0, output_dt_s=0.1, summary_window_s=5.0, **sc.params)
    tr.t_s = np.round(tr.t_s, 9)
    assert tr.summary()["links"][0]["lost_pkts"] > 0
    pk = dataclasses.replace(tr, flow_vars={**tr.flow_vars, "received": 0.98 * tr.sent_pkts})
    c = build_comparison(sc, tr, pk)
    rate = {r["quantity"][5:]: r["packet"] for r in c.rows if r["quantity"].startswith("rate f")}
    dlv = {r["quantity"][15:]: r["packet"] for r in c.rows if r["quantity"].startswith("delivered rate")}
    assert set(dlv) == set(rate) == {"f1", "f2", "f3", "f4"}
    for nm in rate:
        assert dlv[nm] == pytest.approx(0.98 * rate[nm], rel=1e-9)
    assert any(n.startswith("rate = data packets") for n in c.notes)
    # no loss, no extra rows (test_comparison_of_a_run_with_itself_is_zero covers the table without them)
