"""The compiled adaptive kernel with queueing delay in the RTT and with forward delays (issue 14).

Both run from variants of the generated right-hand side (``ecocc.dde.codegen.variant_flags``), the same code
path for every model.  Checked against the NumPy reference solver (same method, same breakpoints: the runs
differ by round-off, and by tolerance-sized amounts where round-off flips one step decision, so the bounds
below scale with the tolerance asked for), against jitcdde's state-dependent delays (PE-TCP here; AECP and
Reno in tests/test_state_dependent_delays.py, both engines), and for conservation with a finite buffer.
"""
import numpy as np
import pytest
from reference_child import jitcdde_hoisted, reference  # jitcdde in a child process

from ecocc import InputError, dumbbell, parking_lot, simulate
from ecocc.dde import engine
from ecocc.models import get_model

C = 1000.0
RTTS = [0.05, 0.2]
MODELS = ["aecp", "petcp", "reno"]


def _kw(model):
    return dict(r0_pps=10.0) if model == "aecp" else {}  # AECP's default r0 = C/N would fill the link at once


def _both(net, model, t_end, **kw):
    out = {}
    for eng in ("numpy", "numba"):
        tr = simulate(net, model, t_end_s=t_end, output_dt_s=0.25, engine=eng, **_kw(model), **kw)
        assert tr.ok, (eng, tr.message)
        out[eng] = tr
    a, b = out["numpy"], out["numba"]
    x_rel = float(np.max(np.abs(b.rate_pps / a.rate_pps - 1)))
    q_abs = float(np.max(np.abs(b.queue_pkts - a.queue_pkts)))
    return a, b, x_rel, q_abs


def test_auto_picks_the_compiled_kernel_for_queueing_delay_and_forward_delays(monkeypatch):
    monkeypatch.setenv("ECOCC_ENGINE", "auto")  # the suite's default is the NumPy reference (conftest)
    fwd = parking_lot([1000, 1000], 0.02, delay_split="propagation")
    for name in MODELS:
        m = get_model(name)
        assert engine.resolve_engine("auto", m, fwd) == "numba"
        # the lock-step and fixed-step kernels do not follow forward delays yet: the NumPy solver, or an error
        for kernel in ("fixed", "lanes"):
            assert engine.resolve_engine("auto", m, fwd, kernel=kernel) == "numpy"
            with pytest.raises(InputError) as ei:
                engine.resolve_engine("numba", m, fwd, kernel=kernel)
            assert ei.value.field == "engine"
            if not (name == "reno" and kernel == "lanes"):  # Reno's RED drops are refused first on the lanes
                assert "forward delays" in str(ei.value.allowed)

    class _Ran(Exception):
        pass

    def fake(*a, **k):
        raise _Ran()
    monkeypatch.setattr(engine, "solve_adaptive", fake)
    with pytest.raises(_Ran):  # simulate's default engine hands a queueing-delay run to the compiled kernel
        simulate(dumbbell(C, RTTS), "reno", t_end_s=1.0, rtt_includes_queueing=True)
    with pytest.raises(_Ran):
        simulate(fwd, "reno", t_end_s=1.0)


@pytest.mark.slow  # one kernel compilation per model (cached), two rtol = 1e-10 runs each
@pytest.mark.parametrize("model", MODELS)
def test_compiled_queueing_delay_matches_the_numpy_reference(model):
    net = dumbbell(C, RTTS, initial_rate_pps=10.0)
    a, b, x_rel, q_abs = _both(net, model, 10.0, rtol=1e-10, atol=1e-10, rtt_includes_queueing=True)
    print(f"{model}: compiled vs NumPy, max rel err x {x_rel:.3g}, max abs err q {q_abs:.3g} pkts "
          f"(peak {a.queue_pkts.max():.4g})")
    assert a.queue_pkts.max() > 1.0  # the delays did move
    # the option changes the run by far more than the bounds below (it is not a no-op in the kernel)
    k = simulate(net, model, t_end_s=10.0, output_dt_s=0.25, engine="numba", rtol=1e-10, atol=1e-10, **_kw(model))
    assert np.max(np.abs(k.rate_pps / b.rate_pps - 1)) > 1e-4
    # tolerances: same method, steps and breakpoints; measured at rtol = atol = 1e-10 (2 flows, 10 s): AECP
    # 5e-15 / 4e-12 pkts (round-off), PE-TCP 5.5e-9 / 2.1e-7 pkts, Reno 4.7e-10 / 6.0e-8 pkts (a flipped step
    # decision: the constant-delay runs differ as much, 2.0e-8 / 1.6e-6 pkts for PE-TCP); bounds ~20x above
    assert x_rel < 1e-7
    assert q_abs < 5e-6


@pytest.mark.slow  # one kernel compilation per model (cached)
@pytest.mark.parametrize("model", MODELS)
def test_compiled_queueing_delay_conserves_with_a_finite_buffer(model):
    net = dumbbell(1000.0, [0.05, 0.2], initial_rate_pps=10.0, buffer_pkts=400.0)
    tr = simulate(net, model, t_end_s=10.0, output_dt_s=0.05, rtt_includes_queueing=True, engine="numba")
    assert tr.ok, tr.message
    resid = tr.arrived_pkts - tr.departed_pkts - tr.lost_pkts - tr.queue_pkts
    # round-off of cumulative counters, as in test_state_dependent_delays
    assert np.max(np.abs(resid)) <= 1e-10 * max(float(tr.arrived_pkts.max()), 1.0) + 1e-9
    assert tr.queue_pkts.max() > 0.0


@pytest.mark.slow  # one kernel compilation per model (cached)
@pytest.mark.parametrize("model", MODELS)
def test_compiled_forward_delays_match_the_numpy_reference(model):
    # a parking lot with the propagation split: the long flow's arrival at the second link is its rate 20 ms
    # earlier, the signals travel back the remaining path; a finite buffer exercises the projection too
    net = parking_lot([1000.0, 800.0], 0.02, buffer_pkts=60.0, delay_split="propagation")
    assert np.any(net.arrays.pair_fwd_s > 0)
    a, b, x_rel, q_abs = _both(net, model, 10.0, rtol=1e-10, atol=1e-10)
    print(f"{model}: forward delays, compiled vs NumPy, max rel err x {x_rel:.3g}, max abs err q {q_abs:.3g} pkts "
          f"(peak {a.queue_pkts.max():.4g})")
    # the split changes the run by far more than the bounds below (the kernel does not ignore it)
    k = simulate(parking_lot([1000.0, 800.0], 0.02, buffer_pkts=60.0), model, t_end_s=10.0, output_dt_s=0.25,
                 engine="numba", rtol=1e-10, atol=1e-10, **_kw(model))
    assert np.max(np.abs(k.rate_pps / b.rate_pps - 1)) > 1e-4
    # tolerances as above: FWD_X_TOL, FWD_Q_TOL (measured values in their comment)
    assert x_rel < FWD_X_TOL
    assert q_abs < FWD_Q_TOL


@pytest.mark.slow  # one kernel compilation
def test_compiled_forward_delays_with_queueing_delay_match_the_numpy_reference():
    net = parking_lot([1000.0, 800.0], 0.02, buffer_pkts=60.0, delay_split="propagation")
    a, b, x_rel, q_abs = _both(net, "reno", 10.0, rtol=1e-10, atol=1e-10, rtt_includes_queueing=True)
    print(f"reno: forward + queueing delays, max rel err x {x_rel:.3g}, max abs err q {q_abs:.3g} pkts")
    assert x_rel < FWD_X_TOL
    assert q_abs < FWD_Q_TOL


# measured at rtol = atol = 1e-10 (parking lot, 10 s): AECP 1.3e-11 / 1.9e-9 pkts, Reno 6.5e-10 / 4.4e-8 pkts,
# Reno with queueing delay too 6.3e-10 / 2.6e-8 pkts, PE-TCP 1.4e-8 / 1.0e-6 pkts; bounds as the dumbbell's (>100x above these; PE-TCP's
# dumbbell run, 5.5e-9 / 2.1e-7 pkts, is the largest measured: ~20x)
FWD_X_TOL, FWD_Q_TOL = 1e-7, 5e-6


def _petcp_jitcdde(ts, with_queueing, max_delay):
    # PE-TCP (ecocc.models.petcp) on a dumbbell, in log rates u_i = ln x_i as ecocc integrates it:
    #   u_i' = a e^{-u_i} + b (1 - (sum_k e^{u_k(t - D_i)} + q(t - D_i)/T) / C),  D_i = tau_i (+ q/C)
    #   q'   = sum_k e^{u_k} - C, held at 0 while empty
    jitcdde_mod = pytest.importorskip("jitcdde")
    import symengine as se
    from ecocc.models.petcp import PETCPParams
    P = PETCPParams()
    y, t = jitcdde_mod.y, jitcdde_mod.t
    N = len(RTTS)
    q = y(N)
    extra = q / C if with_queueing else 0
    f = []
    for i in range(N):
        D = RTTS[i] + extra
        # a flow sends from its start (t = 0) on: before it, its rate is zero in the load, as in ecocc
        # (NetworkSystem.active), while its state's past is the constant initial log rate
        sent = sum(se.exp(y(k, t - D)) for k in range(N))
        load = se.Piecewise((sent, t - D >= 0), (0, True)) + y(N, t - D) / P.T_s
        f.append(P.a_pps2 * se.exp(-y(i)) + P.b_per_s * (1 - load / C))
    X = sum(se.exp(y(i)) for i in range(N))
    dq = X - C
    f.append(se.Piecewise((dq, se.Or(q > 0, dq > 0)), (0, True)))
    # the load's branch (flows not yet sending) holds delayed values: jitcdde_hoisted (reference_child.py)
    dde = jitcdde_hoisted(f, max_delay=max_delay, verbose=False)
    dde.constant_past([np.log(10.0)] * N + [0.0])
    dde.set_integration_parameters(rtol=1e-10, atol=1e-10, max_step=0.01, first_step=0.001, min_step=1e-14)
    dde.adjust_diff()
    return np.array([dde.integrate(tt) for tt in ts])


@pytest.mark.slow  # a jitcdde compilation, a kernel compilation, two rtol = 1e-10 runs
def test_petcp_queueing_delay_matches_jitcdde():
    t_end = 20.0
    ts = np.arange(0.25, t_end + 1e-9, 0.25)
    J = reference(_petcp_jitcdde, ts, True, max(RTTS) + 1.0)
    N = len(RTTS)
    assert J[:, N].max() < 1000.0  # queue below 1000 packets: delays below max(RTTS) + 1 s, jitcdde's max_delay
    net = dumbbell(C, RTTS, initial_rate_pps=10.0)
    idx = None
    for eng in ("numpy", "numba"):
        tr = simulate(net, "petcp", t_end_s=t_end, output_dt_s=0.25, rtol=1e-10, atol=1e-10,
                      rtt_includes_queueing=True, engine=eng)
        assert tr.ok, tr.message
        idx = np.searchsorted(tr.t_s, ts - 1e-9)
        x_rel = np.abs(tr.rate_pps[idx] / np.exp(J[:, :N]) - 1).max()
        q_abs = np.abs(tr.queue_pkts[idx, 0] - J[:, N]).max()
        print(f"PE-TCP {eng}: max rel err x {x_rel:.3g}, max abs err q {q_abs:.3g} pkts (peak {J[:, N].max():.4g})")
        assert x_rel < PETCP_X_TOL and q_abs < PETCP_Q_TOL
    # the constant-delay reading differs from jitcdde's queueing-delay run by more than the bounds
    K = simulate(net, "petcp", t_end_s=t_end, output_dt_s=0.25, rtol=1e-10, atol=1e-10, engine="numba")
    assert np.abs(K.rate_pps[idx] / np.exp(J[:, :N]) - 1).max() > 100 * PETCP_X_TOL


# as the AECP and Reno tests: neither solver locates the queue's kinks in the delayed load (nor jitcdde the
# load's step at t - D = 0).  Measured at rtol = atol = 1e-10 (20 s): NumPy 5.8e-9 / 6.6e-7 pkts, compiled
# 1.1e-8 / 1.4e-6 pkts against jitcdde; the constant-delay runs agree as closely (1.8e-8 / 2.3e-6 pkts).  Until
# 2026-11-26 this was an expected failure at 2.3e-3 / 0.022 pkts: the transcription gave the flows a load of
# 10 packets/s each before t = 0, where ecocc's flows have not started (NetworkSystem.active)
PETCP_X_TOL, PETCP_Q_TOL = 1e-6, 1e-4
