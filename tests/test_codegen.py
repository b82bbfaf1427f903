"""Kernels generated from the model laws (ecocc.dde.codegen): every model compiled against the NumPy reference.

Compilation: each distinct set of laws compiles once per machine (numba's on-disk cache, in the ecocc cache
directory), about a minute on a busy 2-core machine.  The default suite compiles one kernel, AECP's (which
tests/test_kernels.py and tests/test_lanes.py use too); the other models and the test's own model are under
``-m slow``.

Tolerances.  The compiled kernel follows :func:`ecocc.dde.adaptive.solve_dde` statement for statement but
evaluates the laws in SymPy's order, so each evaluation agrees to round-off.  Two cases:

* the same accepted steps (the usual case): the runs agree to round-off; we allow 1e-9 relative to
  ``max(1, |y_i|)``: double-precision round-off (1e-16 per operation) accumulated over ~10^3 steps of
  ~10^2 operations and amplified by the dynamics.  Measured: 1e-15 to 1e-12 (the largest, Symbiosis with
  ``available="measured"``: 1.3e-12 on log-windows of about 3, i.e. 1.3e-4 of the absolute tolerance 1e-8
  of a log-state -- which is why the bound is not written in units of the tolerance);
* a round-off difference flips one accept/reject decision (seen for PE-TCP, whose stiff queue term makes
  it reject ~25 % of its steps), or moves a located queue crossing (an ill-conditioned root: PE-TCP's queue
  emptying at 6.5 s on the dumbbell below, same step counts but a smallest step that differs by 2e-5
  relative): from there the two runs are two different error-controlled solutions, each with a global
  error of a few tens of local tolerances (measured 0.37 tolerance after that crossing).  We then allow 200 x ``atol_i + rtol |y_i|``
  (measured: 27 for PE-TCP at rtol 1e-7) and check, in the slow test, that the compiled run is no less
  accurate than the NumPy run against a reference 1,000 times tighter.
"""
import math
from dataclasses import dataclass

import numpy as np
import pytest

pytest.importorskip("numba")

from ecocc import dumbbell, parking_lot, simulate  # noqa: E402
from ecocc.dde import codegen, engine  # noqa: E402
from ecocc.dde.adaptive import solve_dde  # noqa: E402
from ecocc.models import REGISTRY, get_model  # noqa: E402
from ecocc.models.base import ModelParams, NetworkModel  # noqa: E402
from ecocc.network import CrossTraffic  # noqa: E402
from ecocc.simulate import output_grid  # noqa: E402
from ecocc.system import NetworkSystem  # noqa: E402

RTOL = 1e-7  # simulate's default


def _dumbbell():
    # staggered starts and a stop off any grid (breakpoints), a cross-traffic burst, a finite buffer (loss)
    ct = (CrossTraffic("bottleneck", kind="schedule", schedule=((4.0, 3000.0), (6.5, 0.0))),)
    return dumbbell(12500, [0.05, 0.1, 0.2, 0.4], starts_s=[0.0, 1.0, 2.3, 3.0],
                    stops_s=[math.inf, 7.0, math.inf, math.inf], buffer_pkts=400.0, cross_traffic=ct,
                    initial_rate_pps=10.0)


NETWORKS = {"dumbbell": _dumbbell, "parking-lot": lambda: parking_lot([8000.0, 12000.0, 10000.0], 0.02)}


def _pair(model, net, t_end, rtol=RTOL, **params):
    m = get_model(model)
    sysm = NetworkSystem(m, net, m.make_params(**params), t_end)
    te = output_grid(t_end, 0.05)
    atol = sysm.default_atol()
    got = engine.solve_adaptive(sysm, t_end, rtol=rtol, atol=atol, t_eval=te)
    ref = solve_dde(sysm.problem(), t_end, rtol=rtol, atol=atol, t_eval=te)
    return sysm, got, ref, atol


def _check_against_numpy(sysm, got, ref, atol, rtol=RTOL):
    assert got.status == ref.status == "success", (got.message, ref.message)
    assert got.y.shape == ref.y.shape
    lay = sysm.layout
    # lost and departed are compared at the end only: in samples inside a step whose queue crossed a bound
    # the compiled kernel books the clipped volume (conserving packets), the NumPy solver of this revision
    # only clips the queue (ecocc/dde/integrator.py)
    cols = np.ones(got.y.shape[1], dtype=bool)
    cols[lay["lost"].sl] = cols[lay["departed"].sl] = False
    sc = atol + rtol * np.abs(ref.y)
    diff = np.abs(got.y - ref.y)
    scaled = max(np.max(diff[:, cols] / sc[:, cols]), np.max(diff[-1] / sc[-1]))
    same_mesh = ((got.n_steps, got.n_rejected) == (ref.n_steps, ref.n_rejected)
                 and math.isclose(got.min_step, ref.min_step, rel_tol=1e-9)
                 and math.isclose(got.max_step, ref.max_step, rel_tol=1e-9))
    if same_mesh:
        # the same steps: round-off, 1e-9 relative to max(1, |y|) (see the module docstring)
        rel = np.max(diff[:, cols] / np.maximum(1.0, np.abs(ref.y[:, cols])))
        assert rel < 1e-9, rel
    else:
        assert scaled < 200  # another mesh: two solutions within their global errors (module docstring)
    # conservation holds in every compiled output sample: arrived = departed + lost + queue (packets)
    bal = got.y[:, lay["arrived"].sl] - got.y[:, lay["departed"].sl] - got.y[:, lay["lost"].sl] \
        - got.y[:, lay["queue"].sl]
    assert np.max(np.abs(bal)) < 1e-6 * max(1.0, float(np.max(got.y[:, lay["arrived"].sl])))
    return scaled


# --- the default suite: one compiled kernel (AECP, shared with test_kernels and test_lanes) ----------------

def test_aecp_compiled_matches_numpy():
    sysm, got, ref, atol = _pair("aecp", _dumbbell(), 10.0, r0_pps=10.0)
    _check_against_numpy(sysm, got, ref, atol)
    assert got.settings["kernel"].startswith("ecocc_gen_")


def test_generated_modules_are_keyed_by_laws_not_values():
    """A module per distinct set of laws: AECP and CLTCP (the same laws) share one, a change of a numeric
    parameter reuses it (parameters are kernel inputs), a change of an option (Reno's AQM) is another module."""
    net = dumbbell(1000, [0.05, 0.1])

    def gen(model, **kw):
        m = get_model(model)
        return codegen.generate(NetworkSystem(m, net, m.make_params(**kw), 1.0))
    assert gen("aecp").name == gen("cltcp").name == gen("aecp", alpha_per_s=5.0).name
    assert gen("reno", aqm="red").name != gen("reno", aqm="droptail").name
    g = gen("aecp")
    assert g.param_names == ["alpha_per_s", "beta_per_s", "T_s", "q0_pkts"]
    # AECP's flow law alpha x (ln r - ln x) / x with x = e^u, r = min e^v: the generated code is alpha (v - u)
    assert "p_alpha_per_s*(fb - u_x)" in g.source
    assert g.hist_blocks == ["link:r"]  # only what the signal reads is kept in the history


def test_engine_resolution(monkeypatch, capsys):
    """auto: compiled where it applies (adaptive, lock-step, fixed: every model the generated kernels serve; no
    forward delays), else
    the NumPy solver; without numba, one line on stderr, once."""
    net = dumbbell(1000, [0.05, 0.1])
    monkeypatch.setenv("ECOCC_ENGINE", "auto")
    for name in REGISTRY:
        # models whose laws use a hook the generated kernel does not follow yet run on NumPy, never wrong
        want = "numpy" if engine.codegen_gap(get_model(name)) else "numba"
        assert engine.resolve_engine("auto", get_model(name), net) == want, name
    assert {n for n in REGISTRY if engine.codegen_gap(get_model(n))} == {"reno", "hstcp", "stcp", "xcp"}
    with pytest.raises(Exception, match="link_drop_fraction"):
        engine.resolve_engine("numba", get_model("reno"), net)
    assert engine.resolve_engine("auto", get_model("reno"), net, kernel="fixed") == "numpy"
    assert engine.resolve_engine("auto", get_model("aecp"), net, kernel="fixed") == "numba"
    for kernel in ("fixed", "lanes"):  # generated for every model, as the adaptive one
        assert engine.resolve_engine("auto", get_model("petcp"), net, kernel=kernel) == "numba"
    fwd = parking_lot([1000, 1000], 0.02, delay_split="propagation")
    assert engine.resolve_engine("auto", get_model("aecp"), fwd) == "numpy"
    monkeypatch.setenv("ECOCC_ENGINE", "numpy")
    assert engine.resolve_engine("auto", get_model("aecp"), net) == "numpy"
    monkeypatch.setenv("ECOCC_ENGINE", "fast")
    with pytest.raises(Exception, match="ECOCC_ENGINE = 'fast' is not allowed"):
        engine.resolve_engine("auto", get_model("aecp"), net)
    monkeypatch.setenv("ECOCC_ENGINE", "auto")
    monkeypatch.setattr(engine, "HAVE_NUMBA", False)
    monkeypatch.setattr(engine, "_warned", set())
    capsys.readouterr()
    assert engine.resolve_engine("auto", get_model("petcp"), net) == "numpy"
    assert engine.resolve_engine("auto", get_model("reno"), net) == "numpy"
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "numba is not installed" in err and "pip install 'ecocc[fast]'" in err


# --- every model, a model of the test's own (slow: one compilation each) -----------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("net_name", sorted(NETWORKS))
@pytest.mark.parametrize("model", ["aecp", "cltcp", "petcp", "symbiosis"])  # reno: see codegen_gap
def test_every_model_compiled_matches_numpy(model, net_name):
    params = {"r0_pps": 10.0} if model in ("aecp", "cltcp") else {}
    sysm, got, ref, atol = _pair(model, NETWORKS[net_name](), 10.0, **params)
    _check_against_numpy(sysm, got, ref, atol)


@pytest.mark.slow
@pytest.mark.parametrize("model,params", [("symbiosis", dict(available="measured")),  # reno: codegen_gap
                                          ("symbiosis", dict(rate="propagation")),
                                          ("petcp", dict(delayed_feedback=False))])
def test_model_options_compiled_match_numpy(model, params):
    """Options select other laws (another generated module each); a zero delay reads the current state."""
    sysm, got, ref, atol = _pair(model, _dumbbell(), 10.0, **params)
    _check_against_numpy(sysm, got, ref, atol)


@pytest.mark.slow
@pytest.mark.parametrize("model", ["petcp"])  # reno: see engine.codegen_gap
def test_compiled_is_as_accurate_as_numpy(model):
    """Where the meshes differ, the compiled run is no less accurate than the NumPy run at the same rtol:
    both against a NumPy reference at rtol 1e-10 (1,000 times tighter)."""
    net = _dumbbell()
    sysm, got, ref, atol = _pair(model, net, 10.0)
    tight = solve_dde(sysm.problem(), 10.0, rtol=1e-10, atol=atol * 1e-3, t_eval=output_grid(10.0, 0.05))
    sc = atol + RTOL * np.abs(tight.y)
    e_got = np.max(np.abs(got.y - tight.y) / sc)
    e_ref = np.max(np.abs(ref.y - tight.y) / sc)
    # 2x: two solutions of the same method and tolerance have global errors of the same size; 1: floor
    assert e_got <= 2 * e_ref + 1.0, (e_got, e_ref)


@dataclass(frozen=True)
class _PrimalParams(ModelParams):
    gain_per_s: float = 0.5
    weight_pps: float = 200.0
    price_gain_per_s: float = 2.0
    T_s: float = 0.5
    _positive = ("gain_per_s", "weight_pps", "price_gain_per_s", "T_s")


class _Primal(NetworkModel):
    """Kelly's primal algorithm with a price state per link (a model written only here, for the test):
    x' = k (w - x sum_l p_l(t - d)),  p_l' = g (y_l + q_l / T - C_l) / C_l."""

    name = "test-primal"
    Params = _PrimalParams
    flow_states = ("x",)
    flow_log = (True,)
    link_states = ("p",)
    link_log = (False,)
    path_aggregate = "sum"

    def flow_rate(self, ops, s, qdelay, P, st):
        return s["x"]

    def link_signal(self, ops, ls, q, y, C, P, lst):
        return ops.maximum(ls["p"], 0.0 * ls["p"])

    def flow_law(self, ops, s, fb, own, qdelay, P, st):
        return {"x": P.gain_per_s * (P.weight_pps - s["x"] * fb)}

    def link_law(self, ops, ls, q, y, C, P, lst):
        return {"p": P.price_gain_per_s * (y + q / P.T_s - C) / C}

    def initial_flow_state(self, net, P):
        return {"x": net.arrays.initial_rate_pps}

    def initial_link_state(self, net, P):
        return {"p": np.full(net.n_links, 0.1)}


@pytest.mark.slow
def test_a_model_of_its_own_runs_compiled():
    """A NetworkModel subclass with its laws, not in the registry, runs compiled with no kernel code of its
    own, and matches the NumPy solver."""
    net = parking_lot([800.0, 1200.0, 1000.0], 0.02)
    sysm, got, ref, atol = _pair(_Primal(), net, 20.0)
    _check_against_numpy(sysm, got, ref, atol)
    tr = simulate(net, _Primal(), t_end_s=5.0, engine="numba")
    assert tr.status == "success" and tr.solver["engine"] == "numba"
