"""Exact-delay margins, characteristic roots and simulations (issue #3)."""
import math

import numpy as np
import pytest

from ecocc.stability import analyze, characteristic_roots, margins, pade_check, simulate_decay, stability_map
from ecocc.symbolic import synchronous_loop

PM_SO = math.degrees(math.atan(0.75))     # symmetric optimum a = 2: atan((a^2-1)/(2a)) = 36.87 deg
TAU_CRIT_SO = math.atan(0.75) / 1.0       # phase margin (rad) / crossover (1 rad/s) = 0.6435 s


def test_aecp_symmetric_optimum_margins_exact():
    m = margins(synchronous_loop("aecp").rational(rtt_s=1e-9).with_delay(0.0))
    assert m.phase_margin_deg == pytest.approx(PM_SO, abs=1e-9)       # exact roots of |N|^2 = |D|^2
    assert m.crossover_rad_s == pytest.approx(1.0, abs=1e-10)
    assert m.critical_delay_s == pytest.approx(TAU_CRIT_SO, abs=1e-9)
    assert m.gain_margin == math.inf                                   # no phase crossover without delay
    assert m.stable


@pytest.mark.parametrize("rtt", [0.05, 0.1, 0.3, 0.5, 0.6, 0.7, 1.0])
def test_aecp_roots_agree_with_frequency_verdict(rtt):
    a = analyze("aecp", rtt_s=rtt)
    assert a.consistent
    assert a.roots.residuals[0] < 1e-10          # Newton-refined root: residual near round-off
    assert a.margins.delay_margin_s == pytest.approx(TAU_CRIT_SO - rtt, abs=1e-9)
    assert a.margins.stable == (rtt < TAU_CRIT_SO)


def test_gain_margin_is_marginal_gain():
    # scaling L by the gain margin must put a root on the imaginary axis
    rl = synchronous_loop("aecp").rational(rtt_s=0.3)
    m = margins(rl)
    r = characteristic_roots(rl.A0, [rl.A1 * m.gain_margin], [0.3])
    assert abs(r.rightmost_per_s.real) < 1e-8          # marginal to Newton accuracy
    assert abs(abs(r.rightmost_per_s.imag) - m.phase_crossover_rad_s) < 1e-6


def test_pade_converges_to_exact():
    rl = synchronous_loop("aecp").rational(rtt_s=0.3)
    pc = pade_check(rl, orders=(1, 2, 3, 4, 6))
    err = np.array(pc.phase_margin_error_deg)
    assert np.all(np.diff(err[:4]) < 0)                # monotone improvement with the order
    assert err[-1] < 1e-6                              # order 6: Padé phase error ~ (w tau)^13, tiny at w tau = 0.3
    assert pc.gain_margin[-1] == pytest.approx(pc.exact.gain_margin, rel=1e-6)


def test_heterogeneous_delays_roots():
    # scalar x' = -x(t - 1): known rightmost root pair -0.318 +- 1.337j (Lambert W_0(-1))
    r = characteristic_roots(np.zeros((1, 1)), [np.array([[-1.0]])], [1.0])
    assert r.rightmost_per_s.real == pytest.approx(-0.3181315052, abs=1e-9)
    # two delays: x' = -0.5 x(t-0.5) - 0.5 x(t-1.5) checked against det(Delta) = 0
    r2 = characteristic_roots(np.zeros((1, 1)), [np.array([[-0.5]]), np.array([[-0.5]])], [0.5, 1.5])
    lam = r2.rightmost_per_s
    assert abs(lam + 0.5 * np.exp(-0.5 * lam) + 0.5 * np.exp(-1.5 * lam)) < 1e-10


def test_aecp_linear_decay_rate_matches_simulation():
    lam = analyze("aecp", n_flows=2, rtt_s=0.55).roots.rightmost_per_s.real    # -0.0598 /s
    d = simulate_decay("aecp", n_flows=2, rtt_s=0.55, t_end_s=80.0)
    assert d.decays
    # 10 %: peak-envelope fit of a nonlinear run (5 % perturbation) vs linear root
    assert d.growth_per_s == pytest.approx(lam, rel=0.1)


def test_aecp_any_rtt_claim_contradicted():
    """Theorem 1 of 001/004 claims stability for any RTT; the linearization
    gives a critical delay of 0.6435 s at the papers' defaults, and the
    nonlinear simulation agrees: just inside decays, just outside does not."""
    crit = analyze("aecp", n_flows=2, rtt_s=0.1).margins.critical_delay_s
    # analytic atan(3/4) vs the numerically solved crossover: 1e-9 s is the root finder's tolerance scale
    assert crit == pytest.approx(TAU_CRIT_SO, abs=1e-9)
    inside = simulate_decay("aecp", n_flows=2, rtt_s=0.9 * crit, t_end_s=80.0)
    outside = simulate_decay("aecp", n_flows=2, rtt_s=1.1 * crit, t_end_s=80.0)
    assert inside.decays and inside.growth_per_s < 0
    assert not outside.decays and outside.growth_per_s > -1e-3   # grows, then saturates in a limit cycle


def test_petcp_delay_margin_bracketed_by_simulation():
    a = analyze("petcp", n_flows=2, rtt_s=0.005)
    crit = a.margins.critical_delay_s                 # 12.45 ms at defaults, C = 1000 pkt/s
    assert 0.005 < crit < 0.05
    inside = simulate_decay("petcp", n_flows=2, rtt_s=0.8 * crit, t_end_s=20.0)
    outside = simulate_decay("petcp", n_flows=2, rtt_s=1.4 * crit, t_end_s=20.0)
    assert inside.decays
    assert not outside.decays
    lam = analyze("petcp", n_flows=2, rtt_s=0.8 * crit).roots.rightmost_per_s.real
    assert inside.growth_per_s == pytest.approx(lam, rel=0.1)   # 10 %: envelope fit vs linear root


def test_symbiosis_two_flows_delay_independent():
    # N = 2: |L(jw)| <= gamma < 1, no crossover, stable for every delay
    m = analyze("symbiosis", n_flows=2, rtt_s=1.0).margins
    assert m.critical_delay_s == math.inf and m.stable
    m4 = analyze("symbiosis", n_flows=4, rtt_s=0.1).margins
    assert np.isfinite(m4.critical_delay_s)


def test_stability_map_dataset(tmp_path):
    ds = stability_map("aecp", x_values=[1.0, 2.0], y_values=[0.3, 0.9], n_nodes=24)
    assert bool(ds["stable"].sel(x=2.0, y=0.3)) and not bool(ds["stable"].sel(x=2.0, y=0.9))
    assert ds["delay_margin_s"].attrs["units"] == "s"
    from ecocc.stability import plot_stability_map
    plot_stability_map(ds).savefig(tmp_path / "map.png")
    assert (tmp_path / "map.png").stat().st_size > 1000


def test_cli_margins_json_and_errors():
    import json
    from click.testing import CliRunner
    from ecocc.cli_stability import margins as cmd
    r = CliRunner().invoke(cmd, ["aecp", "--json", "--rtt-s", "0.05"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    for k in ("phase_margin_deg", "gain_margin", "crossover_rad_s", "delay_margin_s", "critical_delay_s", "loop"):
        assert k in d
    assert d["critical_delay_s"] == pytest.approx(TAU_CRIT_SO, abs=1e-9)  # as above: root-finder tolerance
    for bad in (["nope"], ["aecp", "--set", "zeta=1"], ["aecp", "--set", "alpha_per_s=-2"]):
        r = CliRunner().invoke(cmd, bad)
        assert r.exit_code == 2 and "not allowed" in r.output and "Traceback" not in r.output


@pytest.mark.slow
def test_symbiosis_critical_delay_bracketed_by_simulation():
    crit = analyze("symbiosis", n_flows=4, rtt_s=0.1).margins.critical_delay_s   # 1.475 s
    inside = simulate_decay("symbiosis", n_flows=4, rtt_s=1.3, t_end_s=120.0)
    outside = simulate_decay("symbiosis", n_flows=4, rtt_s=1.7, t_end_s=120.0)
    assert 1.3 < crit < 1.7
    assert inside.decays and not outside.decays
    lam = analyze("symbiosis", n_flows=4, rtt_s=1.3).roots.rightmost_per_s.real
    assert inside.growth_per_s == pytest.approx(lam, rel=0.1)   # 10 %: envelope fit vs linear root
