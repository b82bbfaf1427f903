"""`ecocc reproduce`: scenario files, measurements and the scenarios' steady states against what
the fluid models predict analytically (derived here or by the models' equilibrium methods, never
copied from a run)."""
import json
import math
from pathlib import Path

import numpy as np
import pytest

from ecocc import scenarios
from ecocc.models import get_model
from ecocc.reproduce import PAPERS, QUANTITIES, Run, Task, compare, plan, reproducible, run_task, variant
from ecocc.units import mbps_to_pps


def test_every_reproducible_scenario_loads_and_plans():
    names = reproducible()
    assert len(names) >= 25
    for n in names:
        sc = scenarios.load(n)
        assert n.split("-")[0] in PAPERS
        tasks = plan(n)
        assert tasks, n
        rep = sc.reproduce
        assert rep.get("paper"), f"{n}: no [[reproduce.paper]] row"
        for rec in rep["paper"]:
            assert rec["quantity"] in QUANTITIES
            assert rec.get("section"), f"{n}: a paper row without its section"
            assert ("value" in rec and (rec.get("quote"))) or "claim" in rec, n
        assert "no mixed protocols" in open(scenarios.__file__.replace("__init__.py", f"data/{n}.toml")).read() \
            or len(rep.get("protocols", [sc.model])) == 1, f"{n}: say that protocols run separately"


def test_sweep_variants_apply_the_papers_couplings():
    sc = scenarios.load("symbiosis-fig9")
    net, params, dur = variant(sc, "fast", 1000.0)
    C = mbps_to_pps(1000, 1500)
    assert net.links[0].capacity_pps == pytest.approx(C)
    assert net.cross_traffic[0].rate_pps == pytest.approx(0.2 * C)  # r_udp = 0.2 BW
    assert net.flows[0].physical_bw_pps == pytest.approx(C)  # bw_1 = BW
    assert net.links[0].buffer_pkts == pytest.approx(C * 0.06)  # buffer = BDP at RTT 60 ms
    assert params["alpha_pkts"] == 1000.0  # FAST alpha guideline: 1 packet per Mbps
    sc = scenarios.load("symbiosis-fig10")
    net, _, _ = variant(sc, "symbiosis", 500.0)
    assert net.flows[0].rtt_s == pytest.approx(2 * (0.5 + 0.005))  # RTT = 2 (tau + tau_1)
    sc = scenarios.load("symbiosis-fig14")
    net, _, _ = variant(sc, "symbiosis", 15.0)
    assert [f.physical_bw_pps for f in net.flows] == pytest.approx([mbps_to_pps(10, 1500), mbps_to_pps(15, 1500)])


@pytest.mark.slow  # ~35 s on a loaded 2-core machine
def test_cltcp_fig10_max_min_shares_and_xcp_under_use():
    res = {Task("cltcp-fig10", p).label: run_task(Task("cltcp-fig10", p)) for p in ("cltcp", "xcp")}
    r = Run(res["cltcp-fig10/cltcp"])
    # max-min: f1 and f3 split the 60 Mbps link; f2, f4 take the rest of 120 (CLTCP Theorem / eq. 6 at rest)
    # 1e-3 Mbps: 60 s run settled to ~1e-6 (rtol 1e-7 solver), far below
    for f, v in zip(("f1", "f2", "f3", "f4"), (30, 90, 30, 90)):
        assert r.measure("rate_mbps", flow=f) == pytest.approx(v, abs=1e-3)
    # XCP: flow 2's share solves (h + phi)/2 = h x2/y on l1 (see tests/test_baselines.py), scale-free:
    from scipy.optimize import brentq
    x1 = 30.0

    def gap(x2):
        y = x1 + x2
        phi = 0.4 * (120 - y)
        h = 0.1 * y - abs(phi)
        return (h + phi) / 2 - h * x2 / y

    x2 = brentq(gap, 1.0, 90.0)
    rx = Run(res["cltcp-fig10/xcp"])
    assert rx.measure("rate_mbps", flow="f2") == pytest.approx(x2, abs=1e-3)
    assert x2 == pytest.approx(81, abs=0.5)  # and that is the paper's 81 Mbps
    recs = compare("cltcp-fig10", res)
    assert [r.agrees for r in recs] == [True] * 7 + [False]  # flow 4: 87 in ns-2, symmetric 81.2 in the fluid model
    assert recs[-1].why


@pytest.mark.slow  # 300 s of PE-TCP on a limit cycle: minutes on a loaded 2-core machine
def test_petcp_fig8_rates_after_cross_traffic_arrives_and_leaves():
    r = Run(run_task(Task("petcp-fig8", "petcp")))
    # web traffic as its mean 20 Mbps: four flows share 80 Mbps, then 40 Mbps during the burst
    # (Theorem 1 with constant cross traffic: x* = (C - c)/N); 0.05 Mbps: the windows start 10 s after
    # each change, PE-TCP settles within a few seconds (b = 1/s) to ~1e-3 relative
    assert r.measure("rate_mbps", flow="f_1", w=(60, 100)) == pytest.approx(20, abs=0.05)
    assert r.measure("rate_mbps", flow="f_1", w=(150, 200)) == pytest.approx(10, abs=0.05)
    assert r.measure("rate_mbps", flow="f_1", w=(260, 300)) == pytest.approx(20, abs=0.05)
    # the queue is NOT asserted at Theorem 1's q* = a T C N / (b (C - c)) = 6.25 packets: with the
    # feedback one RTT late the run settles on a small limit cycle around it (peak-to-peak ~17 packets,
    # mean ~6.5, measured), so only the rates (means over the windows) are fluid-model predictions


def test_lotka_volterra_scenarios_settle_at_k_over_one_plus_gamma():
    for name in ("symbiosis-fig1",):  # iguchi-fig2 is the same file content, run by test_cli_reproduce_json
        r = Run(run_task(Task(name, "symbiosis")))
        # eq. (5)-(6) at rest: N1 = N2 = K / (1 + gamma) = 100 / 1.9; 1e-3 relative: 20 s after the
        # join with eps = 1.95/s the residue is ~e^-30, the 1 ms delay shifts nothing at rest
        for f in ("species1", "species2"):
            assert r.measure("rate_mbps", flow=f) == pytest.approx(100 / 1.9, rel=1e-3)


def test_logistic_ode_converges_for_every_epsilon():
    # iguchi-fig1: the printed ODE dN/dt = eps (1 - N/K) N converges to K for any eps > 0; the paper's
    # non-convergence for eps = 2.4, 3.0 belongs to the discrete map (recorded as a disagreement)
    for eps in (2.4, 3.0):
        r = Run(run_task(Task("iguchi-fig1", "symbiosis", eps)))
        assert r.measure("rate_mbps", flow="species") == pytest.approx(100, rel=1e-4)  # settled, e^-eps*15


def test_symbiosis_fig12_steps_of_available_bandwidth():
    r = Run(run_task(Task("symbiosis-fig12", "symbiosis")))
    m = get_model("symbiosis")
    sc = scenarios.load("symbiosis-fig12")
    C = mbps_to_pps(100, 1500)
    from ecocc.network import CrossTraffic, dumbbell
    for (t0, t1), udp in (((30, 50), 20), ((80, 100), 35), ((130, 150), 50), ((180, 200), 20)):
        net = dumbbell(C, [0.06], physical_bw_pps=C).replace(
            cross_traffic=(CrossTraffic("bottleneck", kind="constant", rate_pps=mbps_to_pps(udp, 1500)),))
        eq = m.equilibrium(net, m.make_params(**sc.params))
        # eq. (11), (19)-(20) of 002 with the cross traffic of the phase; 1e-3 relative: 30 s after each
        # step with eps = 1.95/s
        got = mbps_to_pps(r.measure("rate_mbps", flow="c1", w=(t0, t1)), 1500)
        assert got == pytest.approx(eq["rate_pps"][0], rel=1e-3)
    assert r.measure("loss_ratio", w=(0, 200)) == 0.0


def test_unknown_scenario_is_an_input_error():
    from ecocc.errors import InputError
    from ecocc.reproduce import reproduce
    with pytest.raises(InputError):
        reproduce("no-such-fig", figures=False)


def test_cli_reproduce_json(tmp_path):
    from click.testing import CliRunner
    from ecocc.cli import main
    out = CliRunner().invoke(main, ["reproduce", "iguchi-fig2", "--json", "--out", str(tmp_path)])
    assert out.exit_code == 0, out.output
    d = json.loads(out.output)  # strict JSON (no NaN)
    assert d["records"] and all(r["agrees"] for r in d["records"])  # K/(1 + gamma), see the test above
    for r in d["records"]:
        for k in ("scenario", "quantity", "paper", "ecocc", "agrees", "why"):
            assert k in r
    assert (tmp_path / "iguchi-fig2.png").exists() and (tmp_path / "iguchi-fig2.pdf").exists()
    bad = CliRunner().invoke(main, ["reproduce", "nope"])
    assert bad.exit_code == 2 and "Traceback" not in bad.output


def test_mixed_and_rate_ratio_inputs_are_refused_with_the_field(tmp_path):
    from ecocc.errors import InputError
    src = (Path(scenarios.__file__).parent / "data" / "petcp-fig6.toml").read_text()
    bad = tmp_path / "petcp-mixed.toml"   # one protocol only: 'mixed' has nothing to mix
    bad.write_text(src.replace('protocols = ["petcp", "hstcp", "reno"]', 'protocols = ["mixed"]'))
    with pytest.raises(InputError, match="mixed"):
        plan(str(bad))
    src = (Path(scenarios.__file__).parent / "data" / "symbiosis-fig3.toml").read_text()
    bad = tmp_path / "symbiosis-noover.toml"   # rate_ratio without its denominator flow
    bad.write_text(src.replace('over = "symbiosis"\n', ""))
    with pytest.raises(InputError, match="over"):
        plan(str(bad))
    sc = scenarios.load("symbiosis-fig4")
    with pytest.raises(InputError, match="buffer_bdp"):
        variant(sc, "mixed", -1.0)
