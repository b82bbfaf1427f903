"""The registry models' generated kernels shipped as source (ecocc/dde/shipped) and compiled at install time.

The first run of a registry model after ``pip install`` finds its generated module through the shipped
index (no SymPy) and loads the module setup.py compiled (no numba, no compilation).  These tests keep the
shipped files current and the install-time build's static signature equal to a run's argument types.
"""
import json
import sys

import numpy as np
import pytest

from ecocc.dde import aot, codegen


def test_shipped_sources_are_current():
    """Every registry model the generated kernel serves has its index entry and source in the package; a
    model, codegen or integrator edit changes the key, so this fails until ``python -m ecocc.dde.codegen``
    is run again (otherwise the first run after installing would silently generate and compile)."""
    systems = codegen._registry_systems()
    assert {"aecp (r0_pps set)", *codegen.SHIP_MODELS} <= set(systems)  # every shipped model is served
    for name, sysm in systems.items():
        idx = aot.SHIPPED / "index" / f"{codegen._laws_key(sysm)}.json"
        assert idx.is_file(), f"{name}: shipped index is stale: run python -m ecocc.dde.codegen"
        meta = json.loads(idx.read_text())
        assert (aot.SHIPPED / f"{meta['name']}.py").is_file()


def test_shipped_index_holds_the_sent_entries_where_the_readings_coincide():
    """For each shipped model whose delayed load does not read the queueing delay (codegen.sent_differs: every
    shipped one with its default options but Reno, whose RED signal reads the load at its queue's bound),
    load_rtt="sent" is the same generated module: the shipped index holds its "sent" entry pointing to the
    shipped module, so a map or a single run under "sent" finds it without SymPy (and without numba, the
    install-time build)."""
    import copy
    differ = set()
    for name, sysm in codegen._registry_systems().items():
        ss = copy.copy(sysm)
        ss.load_rtt = "sent"
        if codegen.sent_differs(ss):
            differ.add(name)
            continue
        idx = aot.SHIPPED / "index" / f"{codegen._laws_key(ss)}.json"
        assert idx.is_file(), f"{name}: no shipped 'sent' entry"
        meta = json.loads(idx.read_text())
        cur = json.loads((aot.SHIPPED / "index" / f"{codegen._laws_key(sysm)}.json").read_text())
        assert meta == cur and meta["sent"] is False, name
    assert differ == {"reno"}


#: the lock-step group width of every registry model the generated kernels serve (measured: aot.LANES_MODEL,
#: docs/notes/mapwidth.md; else LANES, or LANES_KINKS for a model whose queue kinks are breakpoints)
WIDTHS = {"aecp": 8, "aecp (r0_pps set)": 8, "cltcp": 8, "cltcp (r0_pps set)": 8, "petcp": 4, "symbiosis": 8,
          "reno": 4, "hstcp": 1, "stcp": 2, "fast": 4, "xcp": 4}


def test_lane_widths_table_is_model_to_width():
    """``aot.LANES_MODEL`` is ``{model: width}`` (it was ``{model: {"width": w}}``, a dict of one key left by a
    removed setting), each a divisor of LANES, and every registry model's generated kernel keeps its width."""
    assert aot.LANES_MODEL and all(isinstance(k, str) and type(w) is int and aot.LANES % w == 0
                                   for k, w in aot.LANES_MODEL.items())
    for name, w in aot.LANES_MODEL.items():
        assert codegen._lanes_count(False, name) == codegen._lanes_count(True, name) == w
    assert codegen._lanes_count(False, "no such model") == aot.LANES
    assert codegen._lanes_count(True, "no such model") == aot.LANES_KINKS
    systems = codegen._registry_systems(None)
    assert set(systems) == set(WIDTHS)
    for name, sysm in systems.items():
        g = codegen.Generated(sysm.model, sysm.P, list(sysm.st), list(sysm.lst))
        assert g.lanes == WIDTHS[name], name
        assert f"lanes {WIDTHS[name]}" in g.source.splitlines()[1] and f"LANES = {WIDTHS[name]}  #" in g.source


def test_shipped_right_hand_sides_are_forceinline_and_the_overlap_variant_is_not():
    """Every shipped single-model and mixed module's ``_model_rhs`` is ``forceinline`` (LLVM alwaysinline) and its
    ``_model_rhs_cur`` (the overlap passes) is not.  Without it ``numba.pycc`` stopped inlining ``_model_rhs``
    once the kernel also called ``_model_rhs_cur``, and the install-time kernel ran the AECP dumbbell at RTT 1 ms
    2.4x slower than numba's JIT with every other test passing (docs/notes/overlap1.md, "After the merge").  A
    structural check: the time itself is measured by ``benchmarks/aot_vs_jit.py``, not here."""
    mods = sorted(aot.SHIPPED.glob("ecocc_gen_*.py")) + sorted(aot.SHIPPED.glob("ecocc_mix_*.py"))
    assert len(mods) >= 6  # five registry models and the Symbiosis + Reno composite
    for path in mods:
        lines = path.read_text().splitlines()
        deco = {ln.split("(")[0][4:]: lines[i - 1] for i, ln in enumerate(lines)
                if ln.startswith(("def _model_rhs(", "def _model_rhs_cur("))}
        assert "forceinline=True" in deco["_model_rhs"], path.name
        assert deco["_model_rhs_cur"].startswith("@njit") and "forceinline" not in deco["_model_rhs_cur"], path.name


def _generate_in_fresh_interpreter(code, cache_dir):
    """Run ``code`` (which prints the generated module's class name, its name and whether SymPy was imported) in a
    fresh interpreter (this one has SymPy loaded) with the kernel cache ``cache_dir``; the three printed words."""
    import subprocess
    env = dict(__import__("os").environ, ECOCC_CACHE_DIR=str(cache_dir), PYTHONPATH=str(aot._HERE.parent.parent))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    return out.split()


@pytest.mark.parametrize("params", ["", "r0_pps=10.0"])
def test_first_run_finds_the_shipped_module_without_sympy(tmp_path, params):
    """With an empty cache, the N = 4 dumbbell's generated module comes from the shipped index, not from
    SymPy (checked in a fresh interpreter: this one has SymPy loaded), with AECP's r0_pps unset (an option)
    and set (a kernel parameter: another kernel)."""
    code = ("import sys; from ecocc import dumbbell, NetworkSystem; from ecocc.models import get_model; "
            "from ecocc.dde import codegen; m = get_model('aecp'); "
            "s = NetworkSystem(m, dumbbell(15000.0, [0.05, 0.1, 0.2, 0.4], initial_rate_pps=10.0), "
            f"m.make_params({params}), 60.0); "
            "g = codegen.generate(s); print(type(g).__name__, g.name, 'sympy' in sys.modules)")
    kind, name, sympy_loaded = _generate_in_fresh_interpreter(code, tmp_path)
    assert kind == "_Cached" and sympy_loaded == "False"
    assert (aot.SHIPPED / f"{name}.py").is_file()


def test_generated_signature_is_the_arguments_types():
    """The install-time build's static signature equals numba.typeof of the arguments a run passes."""
    numba = pytest.importorskip("numba")
    from ecocc import dumbbell
    from ecocc.dde.engine import ADAPTIVE_ARGS, generic_args
    from ecocc.models import get_model
    from ecocc.system import NetworkSystem
    m = get_model("aecp")
    sysm = NetworkSystem(m, dumbbell(15000.0, [0.05, 0.1, 0.2, 0.4]), m.make_params(), 1.0)
    _, kw = generic_args(sysm, 1.0, t_eval=np.linspace(0, 1, 11), atol=sysm.default_atol())
    sig = aot.generated_signature()
    assert tuple(sig.args) == tuple(numba.typeof(kw[k]) for k in ADAPTIVE_ARGS)


@pytest.mark.slow
def test_installed_generated_kernel_matches_jit(monkeypatch):
    """Where setup.py built the AECP kernel, a run loads it and gives the JIT kernel's numbers exactly."""
    from ecocc import dumbbell, simulate
    net = dumbbell(15000.0, [0.05, 0.1, 0.2, 0.4], initial_rate_pps=10.0)
    runs = {}
    for flag in ("1", "0"):
        monkeypatch.setenv("ECOCC_AOT", flag)
        aot.reset()
        runs[flag] = simulate(net, "aecp", t_end_s=20.0, r0_pps=10.0, output_dt_s=0.05, engine="numba")
    a, b = runs["1"], runs["0"]
    if not a.solver.get("installed"):
        pytest.skip(f"no module built at install time ({a.solver.get('compiled')}, {a.solver.get('module')})")
    assert b.solver["compiled"] == "jit"
    # the same compiled function (pycc and JIT of one source): identical numbers
    np.testing.assert_array_equal(a.rate_pps, b.rate_pps)
    np.testing.assert_array_equal(a.queue_pkts, b.queue_pkts)


def test_generated_index_goes_to_the_cache_not_the_package(tmp_path, monkeypatch):
    """A model not shipped (an option other than the default) is generated and indexed in the cache; the
    shipped directory is left alone (a bug wrote there)."""
    from ecocc import NetworkSystem, dumbbell
    from ecocc.models import get_model
    monkeypatch.setenv("ECOCC_CACHE_DIR", str(tmp_path))
    codegen._gen_cache.clear()
    before = sorted(p.name for p in (aot.SHIPPED / "index").iterdir())
    m = get_model("symbiosis")
    sysm = NetworkSystem(m, dumbbell(1000.0, [0.05, 0.1]), m.make_params(available="measured"), 0.2)
    g = codegen.generate(sysm)
    assert (tmp_path / "generated" / "index" / f"{codegen._laws_key(sysm)}.json").is_file()
    assert (tmp_path / "generated" / f"{g.name}.py").is_file()
    assert sorted(p.name for p in (aot.SHIPPED / "index").iterdir()) == before


def test_without_numba_the_install_time_kernel_runs_and_others_fall_back(monkeypatch):
    # without numba, engine="auto" still runs AECP compiled when its install-time module exists (pip install
    # builds it), and any model without one on the NumPy solver, saying so; explicit engine="numba" is refused there
    import ecocc.dde.engine as eng
    from ecocc import dumbbell, simulate
    from ecocc.errors import InputError
    from ecocc.system import NetworkSystem
    from ecocc.models import get_model
    monkeypatch.setattr(eng, "HAVE_NUMBA", False)
    monkeypatch.setenv("ECOCC_ENGINE", "auto")
    net = dumbbell(1000.0, [0.1, 0.2])
    m = get_model("aecp")
    shipped = eng.installed_kernel_for(NetworkSystem(m, net, m.default_params(), 1.0))
    tr = simulate(net, "aecp", t_end_s=1.0)
    assert tr.ok
    if shipped:
        assert tr.solver.get("compiled") == "aot" and tr.solver.get("installed")
    else:  # a checkout not installed with pip: no module, the NumPy solver
        assert tr.solver.get("compiled") is None
    # HSTCP: a model the generated kernel serves but whose kernel is not shipped (codegen.SHIP_MODELS)
    assert "hstcp" not in codegen.SHIP_MODELS
    assert simulate(net, "hstcp", t_end_s=1.0).solver.get("compiled") is None
    with pytest.raises(InputError, match="numba is not installed"):
        simulate(net, "hstcp", t_end_s=1.0, engine="numba")


def test_without_numba_the_install_time_composite_runs_and_other_mixes_fall_back(monkeypatch, capsys):
    # without numba, a TCP Symbiosis + drop-tail Reno network runs on the composite built at install time
    # (codegen_mixed.SHIP_MIXED; it ran on the NumPy solver before 2026-11-29: 18.6 s against 0.04 s for the shipped
    # symbiosis-vs-reno scenario), and a mix with no install-time composite on the NumPy solver, saying so once
    import ecocc.dde.engine as eng
    from ecocc import dumbbell, simulate
    from ecocc.mixed import Mixed, MixedSystem, resolve_protocols
    from ecocc.errors import InputError
    monkeypatch.setattr(eng, "HAVE_NUMBA", False)
    monkeypatch.setattr(eng, "_warned", set())
    monkeypatch.setenv("ECOCC_ENGINE", "auto")
    net = dumbbell(1000.0, [0.1, 0.2], buffer_pkts=50.0, protocols=["symbiosis", "reno"])
    combo = {"symbiosis": {"model": "symbiosis"}, "reno": {"model": "reno", "aqm": "droptail"}}
    mem, fm = resolve_protocols(net, "symbiosis", None, combo, {})
    shipped = eng.installed_kernel_for(MixedSystem(Mixed(mem, fm), net, 1.0))
    capsys.readouterr()
    tr = simulate(net, t_end_s=1.0, protocols=combo)
    assert tr.ok
    if shipped:
        assert tr.solver.get("compiled") == "aot" and tr.solver.get("installed")
        assert "numba is not installed" not in capsys.readouterr().err
    else:  # a checkout not installed with pip: no module, the NumPy solver
        assert tr.solver.get("compiled") is None
    # PE-TCP against Reno: no composite built at install time
    other = dumbbell(1000.0, [0.1, 0.2], buffer_pkts=50.0, protocols=["petcp", "reno"])
    tr = simulate(other, t_end_s=1.0)
    assert tr.ok and tr.solver.get("compiled") is None
    err = capsys.readouterr().err
    assert err.count("numba is not installed") == 1 and "pip install 'ecocc[fast]'" in err
    with pytest.raises(InputError, match="numba is not installed"):
        simulate(other, t_end_s=1.0, engine="numba")


def test_shipped_mixed_composite_is_current_and_found_without_sympy(tmp_path):
    """The Symbiosis + drop-tail Reno composite (codegen_mixed.SHIP_MIXED) has its index entry and source in the
    package, and a 4-flow Symbiosis/Reno dumbbell of issue 14's first-run case (drop-tail 500 packets) finds it with
    an empty cache, without SymPy (a fresh interpreter)."""
    from ecocc.dde import codegen_mixed
    for label, sysm in codegen_mixed._ship_systems().items():
        idx = aot.SHIPPED / "index" / f"mixed-{codegen_mixed._index_key(sysm)}.json"
        assert idx.is_file(), f"{label}: shipped index is stale: run python -m ecocc.dde.codegen"
        assert (aot.SHIPPED / f"{json.loads(idx.read_text())['name']}.py").is_file()
    code = ("import sys; from ecocc import dumbbell; from ecocc.mixed import Mixed, MixedSystem, resolve_protocols; "
            "from ecocc.dde import codegen_mixed; "
            "net = dumbbell(15000.0, [0.05, 0.1, 0.2, 0.4], protocols=['symbiosis', 'reno', 'symbiosis', 'reno'], "
            "buffer_pkts=500.0); mem, fm = resolve_protocols(net, 'symbiosis', None, {'symbiosis': {'model': "
            "'symbiosis'}, 'reno': {'model': 'reno', 'aqm': 'droptail'}}, {}); "
            "g = codegen_mixed.generate(MixedSystem(Mixed(mem, fm), net, 60.0)); "
            "print(type(g).__name__, g.name, 'sympy' in sys.modules)")
    kind, name, sympy_loaded = _generate_in_fresh_interpreter(code, tmp_path)
    assert kind == "_CachedMixed" and sympy_loaded == "False"
    assert (aot.SHIPPED / f"{name}.py").is_file()


def test_generated_signature_of_a_mixed_composite_is_the_arguments_types():
    """The install-time build's static signature of a mixed composite equals numba.typeof of a run's arguments."""
    numba = pytest.importorskip("numba")
    from ecocc.dde import codegen_mixed
    from ecocc.dde.engine import ADAPTIVE_ARGS
    (sysm,) = codegen_mixed._ship_systems().values()
    _, kw = codegen_mixed.generic_args(sysm, 0.2, t_eval=np.linspace(0, 0.2, 3), atol=sysm.default_atol(), rtol=1e-7,
                                       max_step=np.inf, first_step=None, max_steps=10**6)
    sig = aot.generated_signature(mixed=True)
    assert tuple(sig.args) == tuple(numba.typeof(kw[k]) for k in ADAPTIVE_ARGS)


def test_build_lock_is_per_module(monkeypatch, tmp_path):
    """While a process builds one kernel module, another can take the build lock of another module (the two
    compile at once) but not of the same one (it waits, then loads what the first built)."""
    fcntl = pytest.importorskip("fcntl")
    monkeypatch.setenv("ECOCC_CACHE_DIR", str(tmp_path))
    with aot._build_lock("ecocc_aot_a"):
        for name, free in (("ecocc_aot_a", False), ("ecocc_aot_b", True)):
            with open(tmp_path / f".build-{name}.lock", "a") as fh:  # another open file: flock conflicts
                try:
                    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    fcntl.flock(fh, fcntl.LOCK_UN)
                    got = True
                except BlockingIOError:
                    got = False
            assert got == free, name
