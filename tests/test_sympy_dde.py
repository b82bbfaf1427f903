"""A user's DDE from SymPy expressions (ecocc.dde.user): the compiled path against the NumPy reference
solver and against jitcdde, the ecology models on both engines, and the refusals of malformed input.

The compiled tests compile a kernel on first use (tens of seconds on a loaded machine): marked slow.
"""
import numpy as np
import pytest
from reference_child import reference  # jitcdde in a child process
import sympy as sp

from ecocc.dde.user import sympy_dde, t, y
from ecocc.errors import InputError

TAU, N_EXP, BETA, GAMMA = 15.0, 10, 0.25, 0.1  # Mackey--Glass, jitcdde's example


def mackey_glass():
    return [BETA * y(0, t - TAU) / (1 + y(0, t - TAU) ** N_EXP) - GAMMA * y(0)]


def _jitcdde_mackey_glass(ts, rtol):
    jitcdde = pytest.importorskip("jitcdde")
    jy, jt = jitcdde.y, jitcdde.t
    dde = jitcdde.jitcdde([BETA * jy(0, jt - TAU) / (1 + jy(0, jt - TAU) ** N_EXP) - GAMMA * jy(0)], verbose=False)
    dde.constant_past([1.0])
    dde.set_integration_parameters(rtol=rtol, atol=rtol)
    dde.adjust_diff()  # as tests/test_jitcdde_reference.py: the derivative jump at t = 0 handled
    return np.array([dde.integrate(tt)[0] if tt > 0 else 1.0 for tt in ts])


# ---------------------------------------------------------------------------------------------------------
# parsing and refusals (no compilation)
# ---------------------------------------------------------------------------------------------------------

def test_delays_are_found_from_the_expressions():
    a, d = sp.symbols("a d")
    dde = sympy_dde([y(0, t - 2) + y(0, t - 2) * y(1, t - d) - a * y(1), y(0) - y(1, t)], history=[1.0, 2.0],
                    params={a: 1.0, d: 0.5})
    assert [(lk.comp, float(lk.delay.subs(dde._subs()))) for lk in dde.lookups] == [(0, 2.0), (1, 0.5)]
    np.testing.assert_array_equal(dde.delay_values(), [2.0, 0.5])
    assert dde.with_params({"d": 3.0}).delay_values().tolist() == [2.0, 3.0]
    prob = dde.problem()
    assert prob.positive_delays().tolist() == [0.5, 2.0]


@pytest.mark.parametrize("f,history,params,field,words", [
    ([y(0) * sp.Symbol("b")], [1.0], None, "f[0]", "unknown symbol(s) b"),
    ([y(0, t + 1)], [1.0], None, "f", "delays that are finite and >= 0"),
    ([y(0, t - sp.Symbol("d"))], [1.0], {sp.Symbol("d"): -0.5}, "f", ">= 0"),
    ([y(0, t - y(0))], [1.0], None, "min_delay, max_delay", "bounds of the state- or time-dependent delay"),
    ([y(0, t / 2)], [1.0], None, "min_delay, max_delay", "bounds"),
    ([y(0, t - 1 - y(0, t - 1) ** 2)], [1.0], None, "f[0]", "not of delayed states"),
    ([y(3)], [1.0], None, "f[0]", "a state index"),
    ([sp.Function("g")(t)], [1.0], None, "f[0]", "known functions only"),
    ([y(0)], [1.0, 2.0], None, "history", "1 entries"),
    ([y(0)], [y(0)], None, "history[0]", "not of the states"),
    ([y(0)], [float("nan")], None, "history[0]", "finite"),
    ([y(0)], [1.0], {t: 1.0}, "params", "other than t"),
    ([y(0) * sp.Symbol("b")], [1.0], {sp.Symbol("b"): float("inf")}, "params[b]", "finite"),
    ([sp.Eq(y(0), 1)], [1.0], None, "f[0]", "not a relation"),
])
def test_malformed_input_is_refused(f, history, params, field, words):
    with pytest.raises(InputError) as e:
        sympy_dde(f, history=history, params=params)
    assert e.value.field == field
    assert words in str(e.value)


@pytest.mark.parametrize("lo,hi,field", [(0.0, 2.0, "min_delay"), (1.0, 0.5, "max_delay"),
                                         (1.0, float("inf"), "max_delay")])
def test_variable_delay_bounds_are_checked(lo, hi, field):
    with pytest.raises(InputError) as e:
        sympy_dde([-y(0, t - 1 - y(0) ** 2)], history=[1.0], min_delay=lo, max_delay=hi)
    assert e.value.field == field


def test_solve_options_are_checked():
    dde = sympy_dde([-y(0, t - 1)], history=[1.0])
    with pytest.raises(InputError, match="engine"):
        dde.solve(1.0, engine="fortran")
    with pytest.raises(InputError, match="t_end"):
        dde.solve(-1.0)
    with pytest.raises(InputError, match="rtol"):
        dde.solve(1.0, rtol=0.0, engine="numpy")
    with pytest.raises(InputError, match="params"):
        dde.with_params({"zz": 1.0})
    with pytest.raises(InputError, match="kernel"):
        dde.solve(1.0, engine="numba", kernel="fast")


def test_jitcdde_notations_are_read():
    """jitcdde's SymPy symbols and its SymEngine ``y``/``t`` give the same equations as ours."""
    jitcdde = pytest.importorskip("jitcdde")
    from jitcdde import sympy_symbols as js
    ours = sympy_dde(mackey_glass(), history=[1.0])
    f_sympy = [BETA * js.y(0, js.t - TAU) / (1 + js.y(0, js.t - TAU) ** N_EXP) - GAMMA * js.y(0)]
    jy, jt = jitcdde.y, jitcdde.t
    f_symengine = [BETA * jy(0, jt - TAU) / (1 + jy(0, jt - TAU) ** N_EXP) - GAMMA * jy(0)]
    for f in (f_sympy, f_symengine):
        other = sympy_dde(f, history=[1.0])
        assert sp.simplify(other.exprs[0] - ours.exprs[0]) == 0
        assert [(lk.comp, lk.delay) for lk in other.lookups] == [(lk.comp, lk.delay) for lk in ours.lookups]


def test_numpy_engine_is_the_hand_written_reference():
    """The expressions lambdified on the NumPy solver are the hand-written Hutchinson problem of
    ecocc.models.ecology, step for step (same solver, same steps: only round-off in the evaluation order)."""
    from ecocc.dde.adaptive import solve_dde
    from ecocc.models.ecology import LogisticParams, logistic_problem
    P = LogisticParams(r_per_s=1.4, K=100.0, x0=5.0, delay_s=1.0)
    r, K, d = sp.symbols("r K d")
    dde = sympy_dde([r * y(0) * (1 - y(0, t - d) / K)], history=[5.0], params={r: 1.4, K: 100.0, d: 1.0})
    ts = np.linspace(0, 15, 151)
    a = dde.solve(15.0, t_eval=ts, rtol=1e-9, atol=1e-9, engine="numpy")
    b = solve_dde(logistic_problem(P), 15.0, t_eval=ts, rtol=1e-9, atol=1e-9)
    assert a.ok and b.ok and a.n_steps == b.n_steps
    # the same steps: differences are round-off of the evaluation order (a few ulp of K = 100 per step, over
    # ~10^3 steps); 1e-10 of K is far below the rtol-sized difference a changed step decision would make
    assert np.abs(a.y - b.y).max() < 1e-10 * P.K


def test_numpy_engine_meets_the_closed_form():
    """The undelayed logistic equation through the interface (numbers only, no params) against its closed
    form K / (1 + (K/x0 - 1) e^{-r t})."""
    from ecocc.models.ecology import LogisticParams, logistic_solution
    dde = sympy_dde([1.0 * y(0) * (1 - y(0) / 100.0)], history=[1.0])
    ts = np.linspace(0, 20, 201)
    sol = dde.solve(20.0, t_eval=ts, rtol=1e-10, atol=1e-10, engine="numpy")
    exact = logistic_solution(ts, LogisticParams())
    # global error of an rtol = 1e-10 run over ~20 e-foldings of the transient: measured 4e-9 of K; the bound
    # 1e-7 of K leaves room for the error's growth with the step count while catching any wrong term
    assert sol.ok and np.abs(sol.y[:, 0] - exact).max() < 1e-7 * 100.0


# ---------------------------------------------------------------------------------------------------------
# compiled (slow: the kernel compiles once per machine)
# ---------------------------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("kernel", ["shared", "inline"])
def test_mackey_glass_compiled_matches_numpy_and_jitcdde(kernel):
    ts = np.arange(0.0, 200.0 + 1e-9, 2.0)
    dde = sympy_dde(mackey_glass(), history=[1.0])
    a = dde.solve(200.0, t_eval=ts, rtol=1e-10, atol=1e-10, engine="numba", kernel=kernel)
    b = dde.solve(200.0, t_eval=ts, rtol=1e-10, atol=1e-10, engine="numpy")
    assert a.settings["engine"] == "numba" and b.settings["engine"] == "numpy"
    assert a.settings["kernel_variant"] == kernel
    assert a.ok and b.ok
    assert a.n_steps == b.n_steps  # the same algorithm takes the same steps
    # measured 4e-14: round-off of the evaluation order; 1e-11 (1/10 of rtol) would still catch any changed
    # step decision (tolerance-sized) or a wrong delayed value
    assert np.abs(a.y - b.y).max() < 1e-11
    J = reference(_jitcdde_mackey_glass, ts, 1e-10)
    # jitcdde (another RK pair, its own step control and past interpolation) at the same tolerance: measured
    # 2.6e-9 up to t = 200 (the chaotic attractor amplifies the per-step errors).  1e-7 is 40x that, and far
    # below what a wrong delay or coefficient does (the solutions separate by O(1))
    assert np.abs(a.y[:, 0] - J).max() < 1e-7


@pytest.mark.slow
@pytest.mark.parametrize("kernel", ["shared", "inline"])
def test_params_history_function_t0_and_named_states_compiled_match_numpy(kernel):
    """Two components, two delays (one a parameter), a past given as expressions of t, t0 != 0, named
    states: compiled against the NumPy reference."""
    x, z = sp.Function("x"), sp.Function("z")
    a, d = sp.symbols("a d")
    f = [-a * x(t - 1) + 0.5 * sp.sin(t) * z(t), x(t) - z(t - d) - 0.1 * z(t) ** 3]
    dde = sympy_dde(f, history=[sp.cos(t), 1 + t / 10], params={a: 0.8, d: 0.7}, t0=2.0, states=[x, z])
    ts = np.linspace(2.0, 22.0, 201)
    for dd in (dde, dde.with_params({"d": 1.3})):  # the second reuses the kernel (delays are parameters)
        A = dd.solve(22.0, t_eval=ts, rtol=1e-9, atol=1e-9, engine="numba", kernel=kernel)
        B = dd.solve(22.0, t_eval=ts, rtol=1e-9, atol=1e-9, engine="numpy")
        assert A.ok and B.ok and A.n_steps == B.n_steps
        assert A.settings["kernel"] == dde.generated(fp=kernel == "shared").name
        assert A.y[0, 0] == pytest.approx(np.cos(2.0)) and A.y[0, 1] == pytest.approx(1.2)
        # same steps: round-off only (measured below 1e-13); 1e-10 is 1/10 of rtol
        assert np.abs(A.y - B.y).max() < 1e-10


@pytest.mark.slow
@pytest.mark.parametrize("kernel", ["shared", "inline"])
def test_state_and_time_dependent_delays_compiled_match_numpy(kernel):
    """x'(t) = -x(t - tau(x(t), t)) + 0.1 z with tau = 1 + x^2/(1 + x^2) + 0.2 sin(t)^2 in [1, 2.2]:
    compiled (the delay evaluated at each stage in the generated code) against the NumPy reference
    (DDEProblem.state_delays), which share the semantics."""
    tau = 1 + y(0) ** 2 / (1 + y(0) ** 2) + sp.Rational(1, 5) * sp.sin(t) ** 2
    f = [-y(0, t - tau) + 0.1 * y(1), -0.5 * y(1) + y(0, t - 1)]
    dde = sympy_dde(f, history=[1.5, 0.0], min_delay=1.0, max_delay=2.2)
    assert [lk.variable for lk in dde.lookups] == [True, False]
    ts = np.linspace(0.0, 30.0, 301)
    A = dde.solve(30.0, t_eval=ts, rtol=1e-9, atol=1e-9, engine="numba", kernel=kernel)
    B = dde.solve(30.0, t_eval=ts, rtol=1e-9, atol=1e-9, engine="numpy")
    assert A.ok and B.ok and A.n_steps == B.n_steps
    # same steps, same delayed reads: round-off only, as amplified by the problem.  The state-dependent delay
    # amplifies it near t = 4.2 s: the NumPy solver with its history moved by 1e-15 (1e-14) relative moves by
    # 2.9e-11 (8.9e-11) there, and the compiled run differs by 1.1e-10.  Bound: 1e-10 (1/10 of rtol) or twice
    # that measured sensitivity of the reference
    self_diff = 0.0
    for eps in (1e-15, 1e-14):
        d2 = sympy_dde(f, history=[1.5 * (1 + eps), 0.0], min_delay=1.0, max_delay=2.2)
        C = d2.solve(30.0, t_eval=ts, rtol=1e-9, atol=1e-9, engine="numpy")
        self_diff = max(self_diff, float(np.abs(C.y - B.y).max()))
    assert np.abs(A.y - B.y).max() < max(1e-10, 2.0 * self_diff), self_diff


@pytest.mark.slow
@pytest.mark.parametrize("delay_s,r", [(0.0, 1.0), (1.0, 1.0), (1.0, 1.8)])
def test_logistic_compiled_matches_numpy(delay_s, r):
    from ecocc.models.ecology import LogisticParams, simulate_logistic
    P = LogisticParams(r_per_s=r, delay_s=delay_s)
    a = simulate_logistic(P, 50.0, engine="numba")
    b = simulate_logistic(P, 50.0, engine="numpy")
    assert a.ok and b.ok
    # the same steps (rtol 1e-9): round-off only, measured below 3e-13 of K; 1e-10 of K is 1/10 of rtol
    assert np.abs(a.states - b.states).max() < 1e-10 * P.K


@pytest.mark.slow
@pytest.mark.parametrize("P", ["fig1", "three"])
def test_lotka_volterra_compiled_matches_numpy(P):
    from ecocc.models.ecology import LotkaVolterraParams, simulate_lotka_volterra
    P = LotkaVolterraParams() if P == "fig1" else LotkaVolterraParams(n=3, join_s=(0.0, 5.0, 12.5), gamma=0.5)
    a = simulate_lotka_volterra(P, 60.0, engine="numba")
    b = simulate_lotka_volterra(P, 60.0, engine="numpy")
    assert a.ok and b.ok
    np.testing.assert_array_equal(a.t_s, b.t_s)
    # the compiled runs restart at each join (a fresh first step), the NumPy solver steps across it: the runs
    # differ by tolerance-sized amounts (rtol = atol = 1e-9 per step, populations ~100: measured 5e-8
    # absolute); 1e-6 absolute is 1e-8 of the capacity, far below any modelling difference
    assert np.abs(a.states - b.states).max() < 1e-6


@pytest.mark.slow
def test_step_size_underflow_fails_on_both_engines():
    """y' = -sign(y), y(0) = 1: y reaches 0 at t = 1 and then chatters; with atol = 1e-20 no step that t ~ 1 can
    resolve meets the tolerance.  Both engines fail there with "step size underflow" (the compiled kernel used
    to accept such steps as "inaccurate" and crawl towards max_steps)."""
    dde = sympy_dde([-sp.sign(y(0))], history=[1.0], names=["y"])
    for engine in ("numpy", "numba"):
        sol = dde.solve(3.0, rtol=1e-10, atol=1e-20, engine=engine)
        assert sol.status == "failed" and "step size underflow" in sol.message, (engine, sol.message)
        # where the chattering starts: y = 1 - t reaches 0 at t = 1 (1e-6 is far above the steps there, ~1e-14 s)
        assert abs(sol.t_reached - 1.0) < 1e-6, engine


def test_max_steps_message_in_the_users_time():
    # the compiled kernel's time starts at 0; the message gives the user's (t0 = 5) and the mean step, as the
    # NumPy solver does (measured: both reach t = 9.178 after 300 steps, mean step 0.0139)
    out = {}
    for engine in ("numpy", "numba"):
        sol = sympy_dde([-y(0, t - 1.0)], history=[1.0], t0=5.0).solve(205.0, rtol=1e-12, atol=1e-12, max_steps=300,
                                                                        engine=engine)
        assert sol.status == "failed" and sol.n_steps == 300
        assert sol.message.startswith(f"max_steps = 300 reached at t = {sol.t_reached:.9g}")
        assert f"mean step {(sol.t_reached - 5.0) / 300:.3g}" in sol.message
        assert sol.settings.get("engine", "numpy") == engine
        out[engine] = sol.t_reached
    assert out["numba"] == pytest.approx(out["numpy"], rel=1e-6)  # the same steps up to round-off
