"""The reading of the past before t0 = 0 (``past``, ecocc.system): "silent" (default) and "steady".

* the default is "silent" and is the code path of before the option (the activity tests read the flows'
  ``start_s``): ``past="silent"`` and no ``past`` give the same run, and on a network within the breakpoint
  budget the breakpoints are those of before (the silent start-up's jumps are a subset of level 1);
* "steady": the flows starting at t0 count as sending before it, nothing else changes (later starts stay
  silent, AECP without forward delays reads no delayed activity, so both readings are the same run);
* the compiled kernels (single model and mixed composite) follow the NumPy reference under "steady"; tolerance
  rules of tests/test_codegen.py (TCP Symbiosis's aggregated load: within 200 tolerances of the NumPy run);
* bad values are refused naming the field, the value and the allowed values (API, scenario file, command line);
* a run stopped by its history bound in a silent start-up says which option avoids it.
"""
import math

import numpy as np
import pytest

from ecocc import dumbbell, random_network, simulate
from ecocc.dde.adaptive import solve_dde
from ecocc.errors import InputError
from ecocc.models import get_model
from ecocc.network import CrossTraffic
from ecocc.simulate import output_grid
from ecocc.system import NetworkSystem

RTOL = 1e-7


def _net():
    # flows starting at t0 and later, one stopping, cross traffic: every activity path
    ct = (CrossTraffic("bottleneck", kind="schedule", schedule=((1.5, 2000.0), (2.5, 0.0))),)
    return dumbbell(12500.0, [0.05, 0.1, 0.2, 0.4], starts_s=[0.0, 0.0, 1.0, 2.3],
                    stops_s=[math.inf, 3.0, math.inf, math.inf], buffer_pkts=400.0, cross_traffic=ct,
                    initial_rate_pps=200.0)


def _sys(model, past=None, net=None, t_end=4.0):
    m = get_model(model)
    kw = {} if past is None else {"past": past}
    return NetworkSystem(m, net or _net(), m.make_params(), t_end, **kw)


def test_default_is_silent_and_the_same_run():
    s0, s1 = _sys("symbiosis"), _sys("symbiosis", "silent")
    assert s0.past == "silent"
    np.testing.assert_array_equal(s0.start_s, s0.a.start_s)
    a = simulate(_net(), "symbiosis", t_end_s=4.0, engine="numpy", output_dt_s=0.1)
    b = simulate(_net(), "symbiosis", t_end_s=4.0, engine="numpy", output_dt_s=0.1, past="silent")
    np.testing.assert_array_equal(a.rate_pps, b.rate_pps)
    assert a.solver["n_steps"] == b.solver["n_steps"] and a.solver["past"] == "silent"


def test_silent_startup_jumps_add_no_breakpoint_within_the_budget():
    # a small network: level 1 of t0 already holds every start-up jump, so the breakpoints are unchanged
    s = _sys("symbiosis")
    pr = s.problem()
    assert pr.jump_images.size == 4  # the four RTTs (feedback, own load: the whole RTT on the feedback path)
    with_j = pr.breakpoints(4.0)
    pr.jump_images = np.zeros(0)
    np.testing.assert_array_equal(with_j, pr.breakpoints(4.0))


def test_silent_startup_jumps_are_kept_beyond_the_budget():
    # 1,500 flows of distinct RTTs over 0.6 s: level 1 (1,500 > max(1000, 0.6 / 0.01)) is dropped, the jumps kept
    net = random_network(1500, 50, max_hops=3, seed=0)
    s = _sys("symbiosis", "silent", net, 0.6)
    bp = s.problem().breakpoints(0.6)
    want = np.unique(np.asarray(s.a.rtt_s))
    assert want.size > 1000 and np.all(np.isin(want, bp))
    st = _sys("symbiosis", "steady", net, 0.6)
    assert st.startup_jumps().size == 0 and st.problem().breakpoints(0.6).size < 10
    # AECP reads no delayed activity: no start-up jumps in either reading
    assert _sys("aecp", "silent", net, 0.6).startup_jumps().size == 0


def test_steady_counts_the_flows_starting_at_t0_as_sending_before():
    s, q = _sys("symbiosis", "steady"), _sys("symbiosis", "silent")
    np.testing.assert_array_equal(s.active(-0.5), [True, True, False, False])
    np.testing.assert_array_equal(q.active(-0.5), [False, False, False, False])
    for t in (0.0, 0.5, 1.0, 2.9, 3.0, 3.5):  # at t >= t0 both readings agree
        np.testing.assert_array_equal(s.active(t), q.active(t))
    # the delayed load a flow reads in its first round trip: the others' initial loads (steady), none (silent)
    y0 = s.initial_state()
    Z = [y0[lk.comps] for lk in s.lookups]
    e = np.zeros(0, dtype=bool)
    ds, dq = s.rhs(0.01, y0, Z, e, e), q.rhs(0.01, y0, Z, e, e)
    w = s.layout["flow:w"].sl
    assert np.all(ds[w][:2] < dq[w][:2])  # the load they see slows their growth
    np.testing.assert_array_equal(ds[w][2:], 0.0)  # not started yet in either


def test_aecp_reads_no_delayed_activity_so_both_readings_are_one_run():
    a = simulate(_net(), "aecp", t_end_s=4.0, engine="numpy", output_dt_s=0.1)
    b = simulate(_net(), "aecp", t_end_s=4.0, engine="numpy", output_dt_s=0.1, past="steady")
    np.testing.assert_array_equal(a.rate_pps, b.rate_pps)


def test_symbiosis_readings_differ_in_the_startup():
    a = simulate(_net(), "symbiosis", t_end_s=4.0, engine="numpy", output_dt_s=0.05)
    b = simulate(_net(), "symbiosis", t_end_s=4.0, engine="numpy", output_dt_s=0.05, past="steady")
    assert a.ok and b.ok and b.solver["past"] == "steady"
    assert np.max(np.abs(a.rate_pps - b.rate_pps)) > 1.0  # packets/s: different initial-value problems


@pytest.mark.parametrize("bad", ["constant", "Silent", "", None, 1, True])
def test_bad_past_is_refused(bad):
    with pytest.raises(InputError) as e:
        simulate(_net(), "symbiosis", t_end_s=1.0, past=bad)
    assert e.value.field == "past" and "'silent'" in str(e.value) and "'steady'" in str(e.value)
    m = get_model("symbiosis")
    with pytest.raises(InputError):
        NetworkSystem(m, _net(), m.make_params(), 1.0, past=bad)


def test_bad_past_in_a_scenario_file_and_on_the_command_line(tmp_path):
    from click.testing import CliRunner

    from ecocc import scenarios
    from ecocc.cli import main
    toml = tmp_path / "s.toml"
    body = ('[scenario]\nname = "s"\nmodel = "symbiosis"\nduration_s = 1\n{past}\n'
            '[[links]]\nname = "b"\ncapacity_pps = 1000\n[[flows]]\nname = "f"\nroute = ["b"]\nrtt_s = 0.1\n')
    toml.write_text(body.format(past='past = "warm"'))
    with pytest.raises(InputError) as e:
        scenarios.load(str(toml))
    assert e.value.field == "[scenario].past" and "warm" in str(e.value)
    toml.write_text(body.format(past='past = "steady"'))
    assert scenarios.load(str(toml)).past == "steady"
    r = CliRunner().invoke(main, ["simulate", str(toml), "--past", "warm", "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "Traceback" not in r.output and "warm" in r.output


def test_history_bound_in_a_silent_startup_names_the_option():
    net = random_network(200, 20, max_hops=3, seed=0)
    tr = simulate(net, "symbiosis", t_end_s=0.5, engine="numpy", output_dt_s=0.1, max_history_gib=2e-5)
    assert tr.status.value == "failed"
    assert "past='steady'" in tr.message and "200 distinct times" in tr.message


# -- compiled kernels under "steady" ---------------------------------------------------------------------

def _compiled_vs_numpy(sysm, t_end):
    from ecocc.dde import engine
    te = output_grid(t_end, 0.05)
    atol = sysm.default_atol()
    got = engine.solve_adaptive(sysm, t_end, rtol=RTOL, atol=atol, t_eval=te)
    ref = solve_dde(sysm.problem(), t_end, rtol=RTOL, atol=atol, t_eval=te)
    assert got.status == ref.status == "success", (got.message, ref.message)
    lay = sysm.layout
    cols = np.ones(got.y.shape[1], dtype=bool)
    cols[lay["lost"].sl] = cols[lay["departed"].sl] = False  # at the end only (tests/test_codegen.py)
    sc = atol + RTOL * np.abs(ref.y)
    diff = np.abs(got.y - ref.y)
    return max(np.max(diff[:, cols] / sc[:, cols]), np.max(diff[-1] / sc[-1])), got, ref


def test_first_round_trip_load_is_summed_once_per_link():
    """Before t0 the flows' loads are their initial ones: the generated kernels sum each link's once per call (on
    first use, ``PRE``) and a pair reads that sum in O(1) instead of a per-flow sum (docs/notes/prelink.md; the
    same operations in the same order: benchmarks/prelink_bits.py found 16 compiled runs equal bit for bit before
    and after).  Single model (aggregated load and the per-flow variants) and mixed composite."""
    from ecocc.dde import codegen, codegen_mixed
    from ecocc.mixed import Mixed, MixedSystem, resolve_protocols
    m = get_model("symbiosis")
    for kw in ({}, {"rtt_includes_queueing": True}):
        src = codegen.generate(NetworkSystem(m, _net(), m.make_params(), 1.0, past="steady", **kw)).source
        assert "if md == 1 and td < t0:" in src and "yy = PRE[L + l]" in src
    net = dumbbell(1000.0, [0.1, 0.2], buffer_pkts=50, protocols=["symbiosis", "reno"])
    members, fm = resolve_protocols(net, "symbiosis", None, None, {"reno__aqm": "droptail"})
    src = codegen_mixed.generate(MixedSystem(Mixed(members, fm), net, 1.0, past="steady")).source
    assert "yy = PRE[LM + l * 2 + 0]" in src and "yy = PRE[LM + l * 2 + 1]" in src


@pytest.mark.parametrize("past", ["steady", "silent"])
def test_symbiosis_compiled_matches_numpy(past):
    pytest.importorskip("numba")
    sysm = _sys("symbiosis", past)
    scaled, got, ref = _compiled_vs_numpy(sysm, 4.0)
    # the aggregated load (tests/test_codegen.py::test_aggregated_load_compiled_matches_numpy): 200 tolerances
    assert scaled < 200, scaled
    other = _compiled_vs_numpy(_sys("symbiosis", "silent" if past == "steady" else "steady"), 4.0)[1]
    assert np.max(np.abs(other.y - got.y) / (sysm.default_atol() + RTOL * np.abs(got.y))) > 1e3  # it did change


@pytest.mark.slow
@pytest.mark.parametrize("model", ["xcp", "petcp", "reno"])
def test_other_models_compiled_match_numpy_steady(model):
    pytest.importorskip("numba")
    scaled = _compiled_vs_numpy(_sys(model, "steady"), 4.0)[0]
    assert scaled < 200, (model, scaled)


@pytest.mark.slow
def test_mixed_compiled_matches_numpy_steady():
    pytest.importorskip("numba")
    from ecocc.dde import codegen_mixed, engine
    from ecocc.mixed import Mixed, MixedSystem, resolve_protocols
    from ecocc.network import Flow, Network
    net0 = _net()
    flows = tuple(Flow(f.name, f.route, f.rtt_s, start_s=f.start_s, stop_s=f.stop_s, initial_rate_pps=200.0,
                       protocol=("symbiosis" if i % 2 == 0 else "aecp")) for i, f in enumerate(net0.flows))
    net = Network(net0.links, flows, cross_traffic=net0.cross_traffic)
    members, fm = resolve_protocols(net, "aecp", None, None, {})
    runs = {}
    for past in ("steady", "silent"):
        sysm = MixedSystem(Mixed(members, fm), net, 4.0, past=past)
        assert codegen_mixed.gap(sysm) is None
        te = output_grid(4.0, 0.05)
        atol = sysm.default_atol()
        got = engine.solve_adaptive(sysm, 4.0, rtol=RTOL, atol=atol, t_eval=te)
        ref = solve_dde(sysm.problem(), 4.0, rtol=RTOL, atol=atol, t_eval=te)
        assert got.status == ref.status == "success"
        lay = sysm.layout
        cols = np.ones(got.y.shape[1], dtype=bool)
        cols[lay["lost"].sl] = cols[lay["departed"].sl] = False
        sc = atol + RTOL * np.abs(ref.y)
        assert np.max(np.abs(got.y - ref.y)[:, cols] / sc[:, cols]) < 200
        runs[past] = got.y
    assert np.max(np.abs(runs["steady"] - runs["silent"])) > 1.0


@pytest.mark.slow
def test_fixed_step_and_queueing_delay_kernels_follow_the_reading():
    """The fixed-step kernel and the state-dependent-delay variant get the same ``start`` array: compiled
    against NumPy under both readings (fixed: the same grid, round-off; sdd: measured 7e-15 relative)."""
    pytest.importorskip("numba")
    kw = dict(t_end_s=4.0, output_dt_s=0.1)
    runs = {}
    for past in ("silent", "steady"):
        a = simulate(_net(), "symbiosis", solver="fixed", step_s=1e-3, engine="numpy", past=past, **kw)
        b = simulate(_net(), "symbiosis", solver="fixed", step_s=1e-3, engine="numba", past=past, **kw)
        assert np.max(np.abs(a.rate_pps - b.rate_pps) / np.maximum(1.0, a.rate_pps)) < 1e-9
        c = simulate(_net(), "symbiosis", engine="numba", past=past, rtt_includes_queueing=True, **kw)
        d = simulate(_net(), "symbiosis", engine="numpy", past=past, rtt_includes_queueing=True, **kw)
        assert c.ok and d.ok
        assert np.max(np.abs(c.rate_pps - d.rate_pps) / np.maximum(1.0, d.rate_pps)) < 1e-9
        runs[past] = b.rate_pps
    assert np.max(np.abs(runs["silent"] - runs["steady"])) > 1.0


def test_scenario_readings_reach_every_runner(tmp_path, simulate_readings_spy):
    """A scenario's ``past`` and ``load_rtt`` reach the sweeps' and the packet comparison's fluid runs (they were
    dropped there: a sweep of a "steady" scenario ran the silent reading)."""
    from ecocc import scenarios, sweeps
    toml = tmp_path / "s.toml"
    toml.write_text('[scenario]\nname = "s"\nmodel = "symbiosis"\nduration_s = 0.5\npast = "steady"\n'
                    'load_rtt = "sent"\n[[links]]\nname = "b"\ncapacity_pps = 1000\n[[flows]]\nname = "f"\n'
                    'route = ["b"]\nrtt_s = 0.1\n')
    sc = scenarios.load(str(toml))
    seen = simulate_readings_spy
    sweeps.run_point(sc, {}, engine="numpy")
    assert seen == [("steady", "sent")]
