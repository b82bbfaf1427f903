"""Queueing delay in the round trip: state-dependent delays against jitcdde (issue 14).

AECP on a 1000 packets/s dumbbell with two flows (RTT 50 ms and 200 ms); with
``rtt_includes_queueing=True`` flow ``i`` reads the rate factor one round trip
``tau_i + q(t)/C`` ago, and the queue (q0 = 100 packets: 100 ms of queueing at
equilibrium) makes that round trip 1.5 to 3 times the propagation delay.
jitcdde integrates the same equations, written again in log variables, with
its own state-dependent delays:

    u_i' = alpha (v(t - tau_i - q(t)/C) - u_i)
    v'   = beta (1 - (sum_i e^{u_i} + (q - q0)/T) / C)
    q'   = (sum_i e^{u_i} - C)  if q > 0 or sum_i e^{u_i} > C,  else 0
"""
import numpy as np
import pytest
from reference_child import jitcdde_hoisted, reference  # jitcdde in a child process

from ecocc import InputError, dumbbell, simulate

C = 1000.0
RTTS = [0.05, 0.2]
ALPHA, BETA, T, Q0, X0 = 2.0, 1.0, 2.0, 100.0, 10.0
T_END = 30.0
# largest round trip jitcdde must keep the past for: the queue stays below 300 packets here (checked below)
MAX_DELAY = max(RTTS) + 300.0 / C


def _jitcdde(ts, with_queueing):
    jitcdde_mod = pytest.importorskip("jitcdde")
    import symengine as se
    y, t = jitcdde_mod.y, jitcdde_mod.t
    N = len(RTTS)
    q = y(N + 1)
    X = sum(se.exp(y(i)) for i in range(N))
    extra = q / C if with_queueing else 0
    f = [ALPHA * (y(N, t - RTTS[i] - extra) - y(i)) for i in range(N)]
    f.append(BETA * (1 - (X + (q - Q0) / T) / C))
    dq = X - C
    f.append(se.Piecewise((dq, se.Or(q > 0, dq > 0)), (0, True)))
    dde = jitcdde_mod.jitcdde(f, max_delay=MAX_DELAY, verbose=False)
    dde.constant_past([np.log(X0)] * (N + 1) + [0.0])
    dde.set_integration_parameters(rtol=1e-10, atol=1e-10, max_step=0.01, first_step=0.001, min_step=1e-14)
    dde.adjust_diff()
    return np.array([dde.integrate(tt) for tt in ts])


def _ecocc(with_queueing, engine="numpy"):
    # atol 1e-10 on every component, as jitcdde's run above and the Reno test below: ecocc's default queue atol
    # (1e-4 packets) is not tightened by rtol and was what the comparison measured (docs/notes/sddref.md: with it
    # the queue is 1.11e-4 packets from a 1e-13 reference, 1.1 queue tolerances; jitcdde's 2.15e-6)
    return simulate(dumbbell(C, RTTS, initial_rate_pps=X0), "aecp", t_end_s=T_END, r0_pps=X0, output_dt_s=0.25,
                    rtol=1e-10, atol=1e-10, rtt_includes_queueing=with_queueing, engine=engine)


# the NumPy reference solver and the compiled kernel (ecocc.dde.codegen's sdd variant), each against jitcdde
@pytest.mark.slow  # ~20 s: a jitcdde compilation and two rtol = 1e-10 runs (+ a kernel compilation for numba)
# CI of 2026-11-26 on a new machine, after the queue-event prediction: with ecocc's default queue atol the queue was
# 1.10e-4 packets from jitcdde's (bound 5e-5).  Against tight references (ecocc at rtol 2.5e-14 and jitcdde at 1e-13,
# which agree to 3.7e-9 packets; benchmarks/sddref_tools/sdd_truth.py, docs/notes/sddref.md) that was ecocc's queue
# tolerance: jitcdde's run here is 2.15e-6 packets off, ecocc's 1.11e-4 with the default atol, 1.5e-7 at atol 1e-10
@pytest.mark.parametrize("engine", ["numpy", "numba"])
def test_queueing_delay_in_the_rtt_matches_jitcdde(engine):
    ts = np.arange(0.25, T_END + 1e-9, 0.25)
    J = reference(_jitcdde, ts, True)
    tr = _ecocc(True, engine)
    assert tr.ok, tr.message
    idx = np.searchsorted(tr.t_s, ts - 1e-9)
    N = len(RTTS)
    assert J[:, N + 1].max() < 300.0  # the bound MAX_DELAY rests on
    x_rel = np.abs(tr.rate_pps[idx] / np.exp(J[:, :N]) - 1).max()
    r_rel = np.abs(tr.link_vars["r"][idx, 0] / np.exp(J[:, N]) - 1).max()
    q_abs = np.abs(tr.queue_pkts[idx, 0] - J[:, N + 1]).max()
    print(f"max rel err x {x_rel:.3g}, r {r_rel:.3g}, max abs err q {q_abs:.3g} pkts")
    # the constant-delay run differs from this one by far more than the tolerances below (checked: the
    # option is not a no-op, and the comparison can tell the two readings apart)
    K = _ecocc(False, engine)
    x_rel_const = np.abs(K.rate_pps[idx] / np.exp(J[:, :N]) - 1).max()
    print(f"constant-delay run against jitcdde's queueing-delay run: max rel err x {x_rel_const:.3g}")
    assert x_rel_const > 1e-2
    # tolerances: both solvers at rtol = atol = 1e-10; neither locates the queue's kinks nor (here) the breakpoints
    # the state-dependent delay moves.  The difference is jitcdde's error (above: 2.15e-6 packets, 5.5e-9 in x against
    # the tight reference; ecocc's 1.5e-7, 1.5e-9).  Bounds: as set when first measured (8.1e-9 in x, 4.2e-6 packets
    # in q, default atol, earlier machine), about 12x above that, and 1e5 times below the two readings' difference
    X_TOL, Q_ABS_TOL = 1e-7, 5e-5
    assert x_rel < X_TOL and r_rel < X_TOL
    assert q_abs < Q_ABS_TOL


def test_queueing_delay_option_is_refused_where_it_is_not_implemented():
    net = dumbbell(C, RTTS)
    # fixed-step solvers (NumPy and compiled) have no state-dependent delays; the adaptive ones both do
    for kw in (dict(solver="fixed", step_s=0.01), dict(solver="fixed", step_s=0.01, engine="numba"),
               dict(solver="fixed", step_s=0.01, engine="numpy")):
        with pytest.raises(InputError) as ei:
            simulate(net, "aecp", t_end_s=1.0, rtt_includes_queueing=True, **kw)
        assert ei.value.field == "rtt_includes_queueing"
    # the lock-step and fixed-step compiled kernels refuse a system with the option, naming it
    from ecocc.dde import engine
    from ecocc.models import get_model
    from ecocc.system import NetworkSystem
    m = get_model("aecp")
    sysm = NetworkSystem(m, net, m.make_params(), 1.0, rtt_includes_queueing=True)
    with pytest.raises(InputError, match="rtt_includes_queueing=True with the 'fixed' kernel"):
        engine.solve_fixed(sysm, 1.0, 0.01)
    with pytest.raises(InputError) as ei:
        simulate(net, "petcp", t_end_s=1.0, rtt_includes_queueing=True, delayed_feedback=False)
    assert ei.value.field == "rtt_includes_queueing"
    with pytest.raises(InputError):
        simulate(net, "aecp", t_end_s=1.0, rtt_includes_queueing="yes")


def _reno_jitcdde(ts, rtts, C_r, with_queueing):
    # Reno (Misra-Gong-Towsley) with RED as ecocc simulates it (ecocc.models.reno, ecocc.models.loss), written
    # again for jitcdde in natural windows W_i:
    #   W_i' = 1/R_i - W_i min(W_i(t - D_i) p(q(t - D_i)), 1) / (2 R_i),  R_i = tau_i + q/C,  D_i = tau_i (+ q/C)
    #   q'   = (1 - p(q)) sum_i W_i/R_i - C, held at 0 while empty
    # (at most one decrease per round trip; RED's drops are taken from the arrival before it is queued)
    jitcdde_mod = pytest.importorskip("jitcdde")
    import symengine as se
    from ecocc.models.reno import RenoParams
    P = RenoParams()
    y, t = jitcdde_mod.y, jitcdde_mod.t
    N = len(rtts)
    q = y(N)

    lo, hi = P.red_min_th_pkts, P.red_max_th_pkts

    def ramp(qq):
        return P.red_p_max * (qq - lo) / (hi - lo)

    def red(qq):
        return se.Piecewise((0, qq < lo), (ramp(qq), qq < hi), (1, True))

    def events(Wd, qd):  # min(W(t - D) p(q(t - D)), 1) as one Piecewise (symengine converts no Min of a Piecewise)
        return se.Piecewise((0, qd < lo), (Wd * ramp(qd), se.And(qd < hi, Wd * ramp(qd) < 1)), (1, qd < hi),
                            (Wd, Wd < 1), (1, True))

    R = [rtts[i] + q / C_r for i in range(N)]
    D = [rtts[i] + (q / C_r if with_queueing else 0) for i in range(N)]
    f = [1 / R[i] - y(i) * events(y(i, t - D[i]), y(N, t - D[i])) / (2 * R[i]) for i in range(N)]
    dq = (1 - red(q)) * sum(y(i) / R[i] for i in range(N)) - C_r
    f.append(se.Piecewise((dq, se.Or(q > 0, dq > 0)), (0, True)))
    # RED's ramp and the min() are branches with delayed values in them: jitcdde_hoisted, not jitcdde (a
    # use-after-free in jitcdde otherwise, reference_child.py)
    dde = jitcdde_hoisted(f, max_delay=max(rtts) + 1.0, verbose=False)
    W0 = [max(10.0 * r, 1.0) for r in rtts]  # ecocc's Reno start: W = max(x0 * rtt, 1) with x0 = 10 packets/s
    dde.constant_past(W0 + [0.0])
    # no SymPy simplification before compiling: it cannot convert the conditions of the nested Piecewise back
    dde.compile_C(simplify=False)
    dde.set_integration_parameters(rtol=1e-10, atol=1e-10, max_step=0.01, first_step=0.001, min_step=1e-14)
    dde.adjust_diff()
    return np.array([dde.integrate(tt) for tt in ts])


@pytest.mark.slow  # ~30 s: a jitcdde compilation and an atol = 1e-10 run (+ a kernel compilation for numba)
@pytest.mark.parametrize("engine", ["numpy", "numba"])
def test_reno_queueing_delay_matches_jitcdde(engine):
    # Reno reads its own window and the RED loss one round trip back ("own" and the link-signal lookups);
    # with the option both round trips include q(t)/C, as the Misra-Gong-Towsley model's R(t)
    rtts, C_r, t_end = [0.1, 0.25], 1000.0, 20.0
    ts = np.arange(0.25, t_end + 1e-9, 0.25)
    J = reference(_reno_jitcdde, ts, rtts, C_r, True)
    assert J[:, -1].max() < 1000.0  # queue below 1000 packets: delays below max(rtts) + 1 s, jitcdde's max_delay
    # atol 1e-10 on every component: the default queue atol (1e-4 packets) limits W to ~1e-6 relative here,
    # since the RED loss reads the queue directly (measured 1.5e-6 with the default, 2e-8 with this)
    tr = simulate(dumbbell(C_r, rtts, initial_rate_pps=10.0), "reno", t_end_s=t_end, output_dt_s=0.25, rtol=1e-10,
                  atol=1e-10, rtt_includes_queueing=True, engine=engine)
    assert tr.ok, tr.message
    idx = np.searchsorted(tr.t_s, ts - 1e-9)
    N = len(rtts)
    w_rel = np.abs(tr.flow_vars["W"][idx] / J[:, :N] - 1).max()
    q_abs = np.abs(tr.queue_pkts[idx, 0] - J[:, N]).max()
    print(f"Reno: max rel err W {w_rel:.3g}, max abs err q {q_abs:.3g} pkts (peak {J[:, N].max():.4g})")
    # as the AECP test: neither solver locates the kink of RED's profile at min_th in the delayed queue.
    # Measured against this reference (current law): 3.8e-9 relative in W, 3.8e-7 packets in q (peak 52.4);
    # the previous reference (drops queued, no cap) differs from ecocc's Reno by 1.2e-2 in W, 0.90 packets in
    # q.  Under the old law the two right-hand sides (natural units / log space) gave 2.0e-8 and 4.6e-9 in W,
    # 1.3e-6 and 5.2e-7 packets in q (same law, other round-off: the kink makes the last digits
    # path-dependent); bounds 5x above the larger of those
    assert w_rel < 1e-7 and q_abs < RENO_Q_TOL


RENO_Q_TOL = 1e-5  # packets


@pytest.mark.parametrize("model", ["aecp", "petcp", "symbiosis", "reno"])
def test_queueing_delay_is_inert_while_queues_are_empty(model):
    # a link four times faster than the flows can fill in 5 s: the queue stays empty, Q_p = 0, and the
    # state-dependent run must equal the constant-delay run to round-off (same steps, same values)
    net = dumbbell(1e6, [0.05, 0.2], initial_rate_pps=10.0)
    kw = dict(r0_pps=10.0) if model == "aecp" else {}  # AECP's default r0 = C/N would fill the link at once
    a = simulate(net, model, t_end_s=5.0, output_dt_s=0.05, engine="numpy", **kw)
    b = simulate(net, model, t_end_s=5.0, output_dt_s=0.05, rtt_includes_queueing=True, engine="numpy", **kw)
    assert a.ok and b.ok and a.queue_pkts.max() == 0.0
    np.testing.assert_array_equal(a.rate_pps, b.rate_pps)


@pytest.mark.parametrize("model", ["aecp", "petcp", "symbiosis", "reno"])
def test_queueing_delay_run_conserves_with_a_finite_buffer(model):
    # a finite buffer exercises the projection while the delays move with the queue; conservation holds at
    # every sample
    net = dumbbell(1000.0, [0.05, 0.2], initial_rate_pps=10.0, buffer_pkts=400.0)
    tr = simulate(net, model, t_end_s=10.0, output_dt_s=0.05, rtt_includes_queueing=True, engine="numpy")
    assert tr.ok, tr.message
    resid = tr.arrived_pkts - tr.departed_pkts - tr.lost_pkts - tr.queue_pkts
    # round-off of cumulative counters, as in test_solver_robustness
    assert np.max(np.abs(resid)) <= 1e-10 * max(float(tr.arrived_pkts.max()), 1.0) + 1e-9
    assert tr.queue_pkts.max() > 0.0  # the delays did move


_TOML = ('[scenario]\nname = "riq"\nmodel = "reno"\nduration_s = 4\n{extra}\n[params]\naqm = "droptail"\n'
         '[[links]]\nname = "b"\ncapacity_pps = 1000\nbuffer_pkts = 40\n'
         '[[flows]]\nname = "f"\nroute = ["b"]\nrtt_ms = 50\ncount = 2\ninitial_rate_pps = 300\n')


def test_scenario_files_and_the_cli_take_the_queueing_delay_in_the_rtt(tmp_path):
    """``[scenario].rtt_includes_queueing`` and ``--rtt-includes-queueing / --constant-rtt``: the scenario's value
    unless the command line says otherwise, in ``Scenario.run``, ``ecocc simulate`` and ``ecocc sweep`` (whose
    points are keyed by it); refused with the field named where it cannot apply (not a bool, the fixed-step
    solver, ``sim-map`` and the synchronous loop, which run constant delays only)."""
    import json

    from click.testing import CliRunner

    from ecocc import scenarios
    from ecocc.cli import main
    p = tmp_path / "s.toml"
    p.write_text(_TOML.format(extra=""))
    assert scenarios.load(str(p)).rtt_includes_queueing is False
    base = scenarios.load(str(p)).run()
    p.write_text(_TOML.format(extra="rtt_includes_queueing = true"))
    sc = scenarios.load(str(p))
    assert sc.rtt_includes_queueing is True
    tr = sc.run()
    direct = simulate(sc.network, "reno", t_end_s=4.0, rtt_includes_queueing=True, aqm="droptail")
    assert tr.queue_pkts.max() > 5.0  # 5 ms of queueing delay or more: the option moves the run
    assert np.array_equal(tr.rate_pps, direct.rate_pps)
    assert not np.allclose(tr.rate_pps, base.rate_pps, rtol=1e-3)
    p2 = tmp_path / "bad.toml"
    p2.write_text(_TOML.format(extra='rtt_includes_queueing = "yes"'))
    with pytest.raises(InputError, match=r"\[scenario\]\.rtt_includes_queueing"):
        scenarios.load(str(p2))

    run = CliRunner().invoke

    def sim(*extra):
        r = run(main, ["simulate", str(p), "--out", str(tmp_path / "o"), "--no-figure", "--quiet", "--json",
                       *extra])
        return r, (json.loads(r.output) if r.exit_code == 0 else None)

    r1, s1 = sim()
    r2, s2 = sim("--constant-rtt")
    r3, s3 = sim("--rtt-includes-queueing")
    assert r1.exit_code == r2.exit_code == r3.exit_code == 0, (r1.output, r2.output)
    assert s1["flows"] == s3["flows"] and s1["links"] == s3["links"] and s1["flows"] != s2["flows"]
    # the reading each run used, in its summary (and so in the NetCDF attributes)
    assert s1["solver"]["rtt_includes_queueing"] is True and s2["solver"]["rtt_includes_queueing"] is False
    assert tr.solver["rtt_includes_queueing"] is True and base.solver["rtt_includes_queueing"] is False
    r, _ = sim("--solver", "fixed", "--step-s", "0.001")
    assert r.exit_code == 2 and "[scenario].rtt_includes_queueing" in r.output and "--constant-rtt" in r.output
    for cmd in (["sim-map", str(p), "--out", str(tmp_path / "m")], ["margins", str(p)]):
        r = run(main, cmd)
        assert r.exit_code == 2 and "[scenario].rtt_includes_queueing" in r.output, (cmd, r.output)
    # sweep: the points of both readings kept apart (keyed), the reading in sweep.json
    for flag, n_points in (([], 1), (["--constant-rtt"], 2)):
        r = run(main, ["sweep", str(p), "--axis", "rtt_scale=1", "--out", str(tmp_path / "w"), "--t-end-s", "1",
                       "--quiet", *flag])
        assert r.exit_code == 0, r.output
        assert len(list((tmp_path / "w" / "points").glob("*.json"))) == n_points
        assert json.loads((tmp_path / "w" / "sweep.json").read_text())["rtt_includes_queueing"] is (not flag)
