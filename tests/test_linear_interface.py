"""Linear-analysis interface (issue 13): the Reno loop, margins from a scenario, python-control, Bode/Nyquist."""
import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from ecocc.stability import analyze, bode_plot, characteristic_roots, margins, nyquist_plot, reno_loop, to_control


def test_reno_loop_matches_the_simulators_linearization():
    # independent route: finite differences of the simulator's own right-hand side (network_jacobians) for
    # N identical flows; their roots contain the synchronous loop's (the other N - 1 modes are differential)
    from ecocc import dumbbell
    from ecocc.stability.network_linear import network_jacobians
    N, C, tau = 60, 3750.0, 0.2          # Hollot et al. 2001's example link: N = 60, C = 3750 packets/s, 0.2 s
    rl = reno_loop(N, C, tau)
    r = characteristic_roots(rl.A0, [rl.A1], [tau])
    lin = network_jacobians("reno", dumbbell(C, [tau] * N))
    r_net = characteristic_roots(lin.A0, list(lin.A_delayed), lin.delays_s, n_roots=200)
    assert r.certified
    # 1e-6 relative: central differences (step 1e-6) on the simulator vs the analytic Jacobians
    assert np.min(np.abs(r_net.roots_per_s - r.rightmost_per_s)) < 1e-6 * abs(r.rightmost_per_s)


def test_reno_classic_transfer_function_by_hand():
    # the classic reading (RED drops queued, not what ecocc simulates):
    # W*^2 p(q*) = 2 with p = p_max (q - min_th)/(max_th - min_th), R = tau + q/C, W = C R / N:
    # solved here by bisection, then L(s) = L_red C^2/(2N) / ((s + 2N/(R^2 C)) (s + 1/R)) (Hollot et al. eq. 5)
    N, C, tau, lo, hi, pmax = 60, 3750.0, 0.2, 50.0, 550.0, 0.1
    a, b = lo, hi
    for _ in range(200):
        q = 0.5 * (a + b)
        W = C * (tau + q / C) / N
        a, b = (q, b) if W * W * pmax * (q - lo) / (hi - lo) < 2 else (a, q)
    R = tau + q / C
    rl = reno_loop(N, C, tau, reading="hmtg")
    # 1e-9: bisection to 2^-200 vs brentq at xtol 1e-12 on q (packets); coefficients relative
    np.testing.assert_allclose(np.sort(np.roots(rl.den).real), np.sort([-2 * N / (R * R * C), -1 / R]), rtol=1e-9)
    assert rl.num[0] == pytest.approx(pmax / (hi - lo) * C * C / (2 * N), rel=1e-12)
    assert rl.delay_s == tau


def test_reno_simulated_reading_by_hand():
    # the model as simulated (RED drops never queued), derived by hand from ecocc.models.reno:
    #   W' = 1/R - W W(t - tau) p(q(t - tau))/(2R),  q' = N W (1 - p(q))/R - C,  R = tau + q/C
    # rest point: W^2 p = 2 and N W (1 - p)/R = C, solved here by bisection on q; then
    #   A0 = [[-1/(W R), 0], [N (1 - p)/R, -(1 + N W L_red)/R]],  A1 = [[-1/(W R), -W^2 L_red/(2R)], [0, 0]]
    #   L(s) = L_red C^2/(2N(1 - p)) / ((s + 2/(W R)) (s + (1 + N W L_red)/R))
    N, C, tau, lo, hi, pmax = 60, 3750.0, 0.2, 50.0, 550.0, 0.1
    Lr = pmax / (hi - lo)
    a, b = lo, hi
    for _ in range(200):
        q = 0.5 * (a + b)
        p = Lr * (q - lo)
        W = C * (tau + q / C) / (N * (1 - p))
        a, b = (q, b) if W * W * p < 2 else (a, q)
    R = tau + q / C
    rl = reno_loop(N, C, tau)
    # 1e-9: bisection to 2^-200 vs brentq at xtol 1e-13 on q (packets); entries relative to the largest
    A0 = [[-1 / (W * R), 0.0], [N * (1 - p) / R, -(1 + N * W * Lr) / R]]
    A1 = [[-1 / (W * R), -W * W * Lr / (2 * R)], [0.0, 0.0]]
    np.testing.assert_allclose(rl.A0, A0, rtol=1e-9, atol=1e-9 * np.abs(A0).max())
    np.testing.assert_allclose(rl.A1, A1, rtol=1e-9, atol=1e-9 * np.abs(A1).max())
    np.testing.assert_allclose(np.sort(np.roots(rl.den).real), np.sort([-2 / (W * R), -(1 + N * W * Lr) / R]),
                               rtol=1e-9)
    assert rl.num[0] == pytest.approx(Lr * C * C / (2 * N * (1 - p)), rel=1e-9)
    assert rl.delay_s == tau and "reading simulated" in rl.label
    # the two readings differ here (p = 0.98 %, N W L_red = 0.17): the queue pole by 17 %
    hm = reno_loop(N, C, tau, reading="hmtg")
    assert abs(np.roots(hm.den).real.min() - np.roots(rl.den).real.min()) > 0.1 * abs(np.roots(rl.den).real.min())


def test_reno_reading_is_validated():
    from ecocc.errors import InputError
    with pytest.raises(InputError, match="reading"):
        reno_loop(4, 1000.0, 0.1, reading="classic")


def test_reno_droptail_is_refused_with_the_reason():
    from ecocc.errors import InputError
    with pytest.raises(InputError, match="drop-tail"):
        reno_loop(4, 1000.0, 0.1, aqm="droptail")


def test_to_control_rational_exact_and_pade_close():
    import control
    a = analyze("aecp", rtt_s=0.3)
    c = to_control(a.rational, pade_order=6)
    assert c.delay_s == 0.3
    w = np.array([0.3, 1.0, 3.0])
    np.testing.assert_allclose(c.rational(1j * w), a.rational(1j * w), rtol=1e-12)   # same polynomials
    gm, pm, *_ = control.stability_margins(c.pade)
    # order 6 at w tau = 0.3: Pade phase error ~ (w tau)^13 / ... < 1e-6 deg (tests/test_stability.py)
    assert pm == pytest.approx(a.margins.phase_margin_deg, abs=1e-6)
    assert a.to_control().pade is None


def test_bode_and_nyquist_take_axes_styles_and_return_artists(tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    a = analyze("aecp", rtt_s=0.3)
    fig, (am, ap) = plt.subplots(2, 1)
    r = bode_plot(a, ax=(am, ap), color="tab:red", lw=3, label="AECP")
    assert r["axes"] == (am, ap) and r["magnitude"].get_color() == "tab:red" and r["magnitude"].get_lw() == 3
    assert "rad/s" in ap.get_xlabel() and "dB" in am.get_ylabel() and "degrees" in ap.get_ylabel()
    # the phase at the crossover is the exact-delay phase: -180 + phase margin
    wc = a.margins.crossover_rad_s
    x, y = r["phase"].get_data()
    assert np.interp(wc, x, y) == pytest.approx(-180 + a.margins.phase_margin_deg, abs=0.5)  # grid interpolation
    fig2, ax = plt.subplots()
    n = nyquist_plot(a, ax=ax, color="k")
    assert n["axes"] is ax and n["positive"].get_color() == "k"
    xs, ys = n["positive"].get_data()
    L = a.rational(1j * wc) * np.exp(-1j * wc * 0.3)
    assert np.min(np.abs((xs + 1j * ys) - L)) < 0.05      # the curve passes L(j wc) e^{-j wc tau} (|L| = 1 there)
    fig.savefig(tmp_path / "b.pdf")
    assert (tmp_path / "b.pdf").stat().st_size > 1000


def test_cli_margins_from_the_papers_setting(tmp_path):
    from ecocc.cli_stability import margins as cmd
    r = CliRunner().invoke(cmd, ["petcp", "--json", "--figures", str(tmp_path)])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    # petcp-dumbbell: 5 flows, 100 Mbps at 1000 B = 12500 packets/s, RTT 50 ms (000 Section 5.1.1)
    assert (d["setting"]["n_flows"], d["setting"]["capacity_pps"], d["setting"]["rtt_s"]) == (5, 12500.0, 0.05)
    # same as the explicit call (the README's `margins petcp --rtt-s 0.05 --flows 5 --capacity-pps 12500`)
    ref = analyze("petcp", n_flows=5, rtt_s=0.05, capacity_pps=12500.0)
    assert d["critical_delay_s"] == ref.margins.critical_delay_s
    for kind in ("bode", "nyquist"):
        for ext in ("png", "pdf"):
            assert (tmp_path / f"margins_petcp_{kind}.{ext}").stat().st_size > 1000
    r = CliRunner().invoke(cmd, ["reno", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["model"] == "reno" and d["root_status"] == "certified" and "R0_s" in d["reno_equilibrium"]
    r = CliRunner().invoke(cmd, ["aecp-parking-lot"])
    assert r.exit_code == 2 and "one bottleneck" in r.output and "Traceback" not in r.output


def test_cli_margins_json_null_for_infinite():
    # Symbiosis, N = 2: |L(jw)| < 1 everywhere (tests/test_stability.py): no gain crossover, so the critical
    # delay and the delay margin are infinite
    from ecocc.cli_stability import margins as cmd
    r = CliRunner().invoke(cmd, ["symbiosis", "--flows", "2", "--json"])
    assert r.exit_code == 0, r.output
    assert "Infinity" not in r.output and '"inf"' not in r.output
    d = json.loads(r.output)
    assert d["critical_delay_s"] is None and d["delay_margin_s"] is None
    assert math.isinf(analyze("symbiosis", n_flows=2, rtt_s=0.06, capacity_pps=8333.33).margins.critical_delay_s)


def test_reno_decay_rate_matches_the_certified_root():
    # Hollot et al.'s link (N = 60, C = 3750 packets/s, RTT 0.2 s, RED 50/550/0.1): the certified rightmost
    # root of the simulated reading -0.435 /s (the classic HMTG reading's -0.197 /s would fail the 10 % below:
    # measured -0.443 /s); the simulated queue swing (from rates 5 % above C/N) shrinks at that rate
    from ecocc import dumbbell, simulate
    a = analyze("reno", n_flows=60, capacity_pps=3750.0, rtt_s=0.2)
    assert a.roots.certified and a.margins.stable and a.consistent
    net = dumbbell(3750.0, [0.2] * 60, initial_rate_pps=1.05 * 3750.0 / 60)
    tr = simulate(net, "reno", t_end_s=45.0, output_dt_s=0.01)
    q, t = tr.queue_pkts[:, 0], tr.t_s
    s1, s2 = (np.ptp(q[(t >= x) & (t < x + 10)]) for x in (25.0, 35.0))
    g = math.log(s2 / s1) / 10.0
    # 10 %: peak-to-peak over 10 s windows of a nonlinear run against the linear rate
    assert g == pytest.approx(a.roots.rightmost_per_s.real, rel=0.1)


def test_cli_stability_map_accepts_reno_and_writes_png_pdf(tmp_path):
    from ecocc.cli_stability import stability_map as cmd
    r = CliRunner().invoke(cmd, ["reno", "--x", "red_p_max", "--x-values", "0.05,0.2", "--y", "rtt_s",
                                 "--y-values", "0.1,0.3", "--flows", "60", "--capacity-pps", "3750",
                                 "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    for ext in ("png", "pdf", "nc"):
        assert (tmp_path / f"stability_map_reno.{ext}").stat().st_size > 1000
    assert "of 4 points stable" in r.output and "roots certified at 4" in r.output


@pytest.mark.parametrize("model", ["hstcp", "stcp"])
def test_models_without_a_linearization_are_refused_not_hung(model):
    # their equilibrium solve fails (hstcp: TypeError from SymPy) or runs for minutes (stcp): a clear refusal instead
    from ecocc.errors import InputError
    with pytest.raises(InputError, match="no linearization yet"):
        analyze(model, n_flows=4, rtt_s=0.1, capacity_pps=12500.0)


def test_stability_map_progress_bar_counts_points_and_quiet_hides_it(tmp_path, capsys, monkeypatch):
    # 2 x 2 grid + 0 samples: the bar's total is 4 points and it reaches 4/4; --quiet prints no bar.
    # tqdm redraws at most every 0.1 s (mininterval), so a fast map may never draw 4/4 before the bar is cleared:
    # the bar the map creates (from tqdm.auto, at call time) redraws on every update here
    import tqdm.auto

    class EveryUpdate(tqdm.auto.tqdm):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **{**kwargs, "mininterval": 0, "miniters": 1})

    monkeypatch.setattr(tqdm.auto, "tqdm", EveryUpdate)
    from ecocc.cli_stability import stability_map as cmd
    from ecocc.stability import stability_map
    stability_map("aecp", "alpha_per_s", [1.0, 2.0], "rtt_s", [0.1, 0.2], progress=True)
    err = capsys.readouterr().err
    assert "aecp: stability map" in err and "4/4" in err
    stability_map("aecp", "alpha_per_s", [1.0, 2.0], "rtt_s", [0.1, 0.2])
    assert "stability map" not in capsys.readouterr().err
    r = CliRunner().invoke(cmd, ["aecp", "--axis", "alpha_per_s=1,2", "--axis", "rtt_s=0.1,0.2", "--out",
                                 str(tmp_path), "--quiet"])
    assert r.exit_code == 0, r.output
    assert "stability map:" not in r.output and "of 4 points stable" in r.output
