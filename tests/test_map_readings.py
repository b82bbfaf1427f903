"""The readings ``past`` and ``load_rtt`` in batches and maps: ``simulate_batch``, ``simulate_map``, ``ecocc sim-map``.

They were dropped there: a map or batch ran the defaults (silent, current) whatever the caller or the scenario
file said (``sim-map`` of a ``past = "steady"`` scenario silently ran the silent reading).  Checked here:

* a map point and a batch member under a reading equal a :func:`ecocc.simulate` run of the same point under it
  (and differ from the other reading, so a dropped reading fails);
* the readings are in the returned dataset's attributes, in the JSON summary of ``sim-map``, and in the resume
  settings: a map run under one reading is never resumed as the other;
* ``sim-map`` takes the scenario's readings by default and ``--past`` / ``--load-rtt`` like ``ecocc simulate``;
  bad values are refused naming the option, the value and what is allowed, without a traceback;
* the lock-step kernel follows ``past`` (slow: compiles) and refuses ``load_rtt="sent"`` where it changes the
  equations (a delayed load that reads the queueing delay, derived from the model's laws), which ``engine="auto"``
  then runs one point at a time, saying why; where the two readings coincide it runs "sent" (slow).

Cases where the readings matter in 2 s: TCP Symbiosis overloaded at the start (its delayed loads switch on one
RTT after t = 0 under "silent", not under "steady": the queue differs by ~0.3 packet at the end), and Reno with
drop-tail on a 50-packet buffer (the full buffer reads the delayed load, W/(tau + Q) at the current or the
sending time's queue: means differ by ~1.3 packets).
"""
import json

import numpy as np
import pytest
from click.testing import CliRunner

from ecocc import dumbbell, simulate
from ecocc.batch import _window_stats, lanes_gap, simulate_batch, simulate_map
from ecocc.errors import InputError

T_END, WINDOW, DT, RTOL = 2.0, 0.5, 0.01, 1e-7


def _sym_net():
    return dumbbell(1000.0, [0.05, 0.12], initial_rate_pps=800.0, buffer_pkts=200.0)


def _reno_net():
    return dumbbell(1000.0, [0.05, 0.12], initial_rate_pps=800.0, buffer_pkts=50.0)


#: reading -> (model, network, base parameters, a numeric parameter for the map's y axis, default, other value)
CASES = {"past": ("symbiosis", _sym_net, {}, "epsilon_per_s", "silent", "steady"),
         "load_rtt": ("reno", _reno_net, {"aqm": "droptail"}, "red_p_max", "current", "sent")}
MAP = dict(x_name="rtt_scale", x_values=[0.5, 1.0], t_end_s=T_END, window_s=WINDOW, sample_dt_s=DT, rtol=RTOL)


def _single(net, model, reading, value, rtt_scale=1.0, engine="numpy", **params):
    """Window statistics (mean, swing per link) of one simulate() run of a map point."""
    tr = simulate(net.scaled(rtt_scale=rtt_scale), model, t_end_s=T_END, output_dt_s=DT, rtol=RTOL, engine=engine,
                  **{reading: value}, **params)
    assert tr.ok and tr.solver[reading] == value
    swing, mean, _ = _window_stats(tr.t_s, tr.queue_pkts, T_END, WINDOW, RTOL)
    return mean, swing, tr.solver["n_steps"]


@pytest.mark.parametrize("reading", sorted(CASES))
def test_map_point_equals_a_single_run_under_the_reading(reading):
    """engine="numpy": every point is one simulate() on the NumPy solver with the same arguments, so a point under
    a reading equals the single run under it exactly (same solver, same steps, same samples); and it differs
    from the other reading (a dropped reading would give that one)."""
    model, net, params, y_name, default, other = CASES[reading]
    single = {}
    for value in (default, other):
        ds = simulate_map(net(), model, y_name=y_name, y_values=[params.get(y_name, _default(model, y_name))],
                          engine="numpy", **MAP, **{reading: value}, **params)
        assert ds.attrs[reading] == value
        assert ds.attrs["engine"] == "numpy"
        for j, s in enumerate(ds.x.values):
            mean, swing, _ = single[value, s] = _single(net(), model, reading, value, rtt_scale=s, **params)
            np.testing.assert_array_equal(ds.queue_mean_pkts.values[0, j], mean)
            np.testing.assert_array_equal(ds.queue_swing_pkts.values[0, j], swing)
    for s in MAP["x_values"]:  # the readings give different maps here (solver error: ~1e-7 packet)
        assert np.max(np.abs(single[default, s][0] - single[other, s][0])) > 0.05


def _default(model, name):
    from ecocc.models import get_model
    return getattr(get_model(model).make_params(), name)


@pytest.mark.parametrize("reading", sorted(CASES))
def test_batch_member_equals_a_single_fixed_step_run(reading):
    """A batch member (RTT scalings stacked along the batch axis) under a reading against simulate(solver="fixed")
    under it: the same RK4 grid, stages and operations per member (measured identical; allowed: round-off)."""
    model, net, params, _, default, other = CASES[reading]
    runs = {}
    for value in (default, other):
        b = simulate_batch(net(), model, [params, params], rtt_scale=[0.5, 1.0], t_end_s=T_END, step_s=2e-3,
                           output_dt_s=DT, engine="numpy", **{reading: value})
        other_reading = "load_rtt" if reading == "past" else "past"
        assert b.attrs[reading] == value and b.attrs[other_reading] in ("silent", "current")
        for i, s in enumerate((0.5, 1.0)):
            tr = simulate(_scaled(net(), s), model, t_end_s=T_END, output_dt_s=DT, solver="fixed", step_s=2e-3,
                          engine="numpy", **{reading: value}, **params)
            np.testing.assert_allclose(b["queue"].isel(member=i).values, tr.queue_pkts, rtol=1e-12, atol=1e-9)
            np.testing.assert_allclose(b["rate"].isel(member=i).values, tr.rate_pps, rtol=1e-12, atol=1e-9)
        runs[value] = b["queue"].values
    assert np.max(np.abs(runs[default] - runs[other])) > 0.1


def _scaled(net, s):
    return net.scaled(rtt_scale=s)


def test_bad_readings_are_refused_before_anything_runs():
    net = _sym_net()
    with pytest.raises(InputError) as e:
        simulate_map(net, "symbiosis", past="warm", **MAP)
    assert e.value.field == "past" and "'steady'" in str(e.value)
    with pytest.raises(InputError) as e:
        simulate_map(net, "symbiosis", load_rtt="Sent", **MAP)
    assert e.value.field == "load_rtt" and "'sent'" in str(e.value)
    with pytest.raises(InputError) as e:
        simulate_batch(net, "symbiosis", t_end_s=1.0, step_s=1e-3, past=None)
    assert e.value.field == "past"
    with pytest.raises(InputError) as e:
        simulate_batch(net, "symbiosis", t_end_s=1.0, step_s=1e-3, load_rtt="then")
    assert e.value.field == "load_rtt"


def test_lock_step_kernel_gap_names_load_rtt_sent():
    net, dt = _reno_net(), {"aqm": "droptail"}
    assert lanes_gap("reno", net, params=dt) is None and lanes_gap("reno", net, load_rtt="current", params=dt) is None
    assert "load_rtt='sent'" in lanes_gap("reno", net, load_rtt="sent", params=dt)
    with pytest.raises(InputError) as e:
        lanes_gap("reno", net, load_rtt="later")
    assert e.value.field == "load_rtt"


#: (model, parameters) -> whether load_rtt="sent" changes the equations (the models issue 14 named as coinciding,
#: and three whose delayed load reads the queueing delay: Reno with RED too, whose signal reads the load at its
#: queue's bound, max_th, models.loss)
SENT_CASES = {("aecp", ()): False, ("cltcp", ()): False, ("petcp", ()): False, ("reno", ()): True,
              ("symbiosis", ()): False, ("reno", (("aqm", "droptail"),)): True,
              ("symbiosis", (("available", "measured"),)): True}


def _sent_text_differs(model, P):
    """The derivation the gap must follow: whether the generated kernel's text under "sent" differs from the one
    under "current" for the parameters ``P`` (the laws read with SymPy, no compilation)."""
    from ecocc.dde import codegen
    from ecocc.models import get_model
    from ecocc.system import NetworkSystem
    m = get_model(model)
    s = NetworkSystem(m, _sym_net(), P, 1.0)
    cur = codegen.Generated(m, s.P, list(s.st), list(s.lst))
    sent = codegen.Generated(m, s.P, list(s.st), list(s.lst), sent=True)
    assert sent.sent == (sent.source != cur.source)
    return sent.source != cur.source


@pytest.mark.parametrize("model, params", sorted(SENT_CASES), ids=lambda v: v if isinstance(v, str) else
                         ",".join(f"{k}={x}" for k, x in v) or "default")
def test_sent_is_a_lock_step_gap_only_where_the_readings_differ(model, params):
    """load_rtt="sent" was refused by the lock-step kernel for every model, even where it is the same equations as
    "current" (no delayed load reads the queueing delay).  The gap now follows the model's laws: it is there
    exactly where the generated kernel's "sent" text differs from the "current" one, and the hand list of
    SENT_CASES agrees with that derivation."""
    from ecocc.models import get_model
    params = dict(params)
    differs = _sent_text_differs(model, get_model(model).make_params(None, **params))
    assert differs == SENT_CASES[(model, tuple(sorted(params.items())))]
    why = lanes_gap(model, _sym_net(), load_rtt="sent", params=params)
    if differs:
        assert "load_rtt='sent'" in why and model in why
    else:
        assert why is None
    assert lanes_gap(model, _sym_net(), load_rtt="current", params=params) is None


def test_sent_gap_follows_the_derivation_for_every_registry_model():
    """Every registry model the generated kernels serve, with its default options: the lock-step gap under "sent"
    is there exactly where the "sent" kernel text differs (Reno's, whose RED signal reads the load at its queue's
    bound), and the engine's check agrees."""
    from ecocc.dde import codegen
    from ecocc.dde.engine import _variant_gap
    from ecocc.system import NetworkSystem
    systems = codegen._registry_systems(None)
    assert {"aecp", "cltcp", "petcp", "reno", "symbiosis"} <= set(systems)
    for label, sysm in systems.items():
        m = sysm.model
        differs = _sent_text_differs(m.name, sysm.P)
        ss = NetworkSystem(m, sysm.net, sysm.P, 1.0, load_rtt="sent")
        assert (_variant_gap(ss, "lanes") is not None) == differs, label  # before: a gap for every model
        assert codegen.sent_differs(ss) == codegen.sent_differs(sysm) == differs, label


def test_numba_map_refuses_sent_and_auto_runs_it_per_point(monkeypatch):
    """engine="numba" cannot honour load_rtt="sent" (the lock-step kernel reads delayed rates with the current
    queueing delay): refused before anything runs.  engine="auto" runs one simulate() per point instead and says
    why in the attributes; here $ECOCC_ENGINE=numpy makes those runs the NumPy solver's (no compilation), so a
    point equals the single NumPy run exactly."""
    pytest.importorskip("numba")
    model, net, params, y_name, _, _ = CASES["load_rtt"]
    kw = dict(y_name=y_name, y_values=[0.1], **MAP, **params)
    with pytest.raises(InputError) as e:
        simulate_map(net(), model, engine="numba", load_rtt="sent", **kw)
    assert e.value.field == "engine" and "load_rtt='sent'" in str(e.value)
    monkeypatch.setenv("ECOCC_ENGINE", "numpy")
    ds = simulate_map(net(), model, engine="auto", load_rtt="sent", **kw)
    assert ds.attrs["load_rtt"] == "sent" and ds.attrs["engine"] == "auto (per point)"
    assert "load_rtt='sent'" in ds.attrs["engine_note"]
    mean, swing, _ = _single(net(), model, "load_rtt", "sent", rtt_scale=1.0, **params)
    np.testing.assert_array_equal(ds.queue_mean_pkts.values[0, 1], mean)


def test_a_map_is_never_resumed_under_the_other_reading():
    """The readings are part of the settings a resumed map must share; a map stored before they were recorded
    (no attributes) ran the defaults and resumes only as those."""
    model, net, params, y_name, _, _ = CASES["past"]
    kw = dict(y_name=y_name, y_values=[1.95], engine="numpy", **MAP, **params)
    silent = simulate_map(net(), model, **kw)
    with pytest.raises(InputError) as e:
        simulate_map(net(), model, past="steady", previous=silent, **kw)
    assert e.value.field == "previous"
    with pytest.raises(InputError) as e:
        simulate_map(net(), model, load_rtt="sent", previous=silent, **kw)
    assert e.value.field == "previous"
    again = simulate_map(net(), model, past="silent", previous=silent, **kw)
    assert again.attrs["n_run"] == 0  # the same reading resumes (nothing left to run)
    old = silent.copy()
    del old.attrs["past"], old.attrs["load_rtt"]
    assert simulate_map(net(), model, previous=old, **kw).attrs["n_run"] == 0
    with pytest.raises(InputError):
        simulate_map(net(), model, past="steady", previous=old, **kw)


# -- the command line ---------------------------------------------------------------------------------------------

SCENARIO = ('[scenario]\nname = "s"\nmodel = "symbiosis"\nduration_s = 2\n{extra}\n'
            '[[links]]\nname = "bottleneck"\ncapacity_pps = 1000\nbuffer_pkts = 200\n'
            '[[flows]]\nname = "a"\nroute = ["bottleneck"]\nrtt_s = 0.05\ninitial_rate_pps = 800\n'
            '[[flows]]\nname = "b"\nroute = ["bottleneck"]\nrtt_s = 0.12\ninitial_rate_pps = 800\n')


def _sim_map(toml, out, *extra):
    from ecocc.cli import main
    return CliRunner().invoke(main, ["sim-map", str(toml), "--out", str(out), "--engine", "numpy",
                                     "--axis", "epsilon_per_s=1.95", "--axis", "rtt_scale=1", "--t-end-s", "2",
                                     "--window-s", "0.5", "--no-figure", "--quiet", "--json", *extra])


def _stored(out, stem="sim_map"):
    import xarray as xr
    with xr.open_dataset(out / f"{stem}.nc", engine="h5netcdf") as ds:
        return ds.load()


def test_sim_map_runs_the_scenarios_reading_and_the_option_overrides_it(tmp_path):
    """A scenario file with past = "steady": sim-map runs it under "steady" (it ran "silent" before), records it
    (NetCDF attributes, JSON summary), and --past silent overrides the file; each map equals the single run of
    the point under its reading.  A second map under the other reading into the same --out is computed, never
    resumed (the readings are in the resume key), into its own files (the readings in their names:
    test_sim_map_under_another_reading_keeps_the_first_maps_files)."""
    from ecocc import scenarios
    toml = tmp_path / "s.toml"
    toml.write_text(SCENARIO.format(extra='past = "steady"'))
    sc = scenarios.load(str(toml))
    out = tmp_path / "o"
    r = _sim_map(toml, out)
    assert r.exit_code == 0, r.output
    st = _stored(out, "sim_map_past-steady")
    want = {v: _single(sc.network, "symbiosis", "past", v)[0] for v in ("silent", "steady")}
    assert np.max(np.abs(want["steady"] - want["silent"])) > 0.05
    # the point is the steady run's (before: the silent run's, the scenario's reading dropped)
    np.testing.assert_array_equal(st.queue_mean_pkts.values[0, 0], want["steady"])
    assert st.attrs["past"] == "steady" and st.attrs["load_rtt"] == "current"
    summary = json.loads(r.stdout[r.stdout.index("{"):])
    assert (summary["past"], summary["load_rtt"]) == ("steady", "current")
    key_steady = st.attrs["run_key"]

    r = _sim_map(toml, out, "--past", "silent")
    assert r.exit_code == 0, r.output
    st = _stored(out)  # sim_map.nc: the default readings' name
    assert st.attrs["past"] == "silent" and st.attrs["run_key"] != key_steady and st.attrs["n_run"] == 1
    np.testing.assert_array_equal(st.queue_mean_pkts.values[0, 0], want["silent"])

    r = _sim_map(toml, out, "--past", "silent")  # the same command again: resumed, nothing to run
    assert r.exit_code == 0, r.output
    assert _stored(out).attrs["n_run"] == 0


def test_sim_map_load_rtt_option_and_scenario_field(tmp_path):
    """--load-rtt sent (and [scenario].load_rtt = "sent") reach the map: recorded, and --engine numpy runs it."""
    toml = tmp_path / "s.toml"
    toml.write_text(SCENARIO.format(extra='load_rtt = "sent"'))
    r = _sim_map(toml, tmp_path / "a")
    assert r.exit_code == 0, r.output
    assert _stored(tmp_path / "a", "sim_map_load_rtt-sent").attrs["load_rtt"] == "sent"
    toml.write_text(SCENARIO.format(extra=""))
    r = _sim_map(toml, tmp_path / "b", "--load-rtt", "sent", "--past", "steady")
    assert r.exit_code == 0, r.output
    st = _stored(tmp_path / "b", "sim_map_past-steady_load_rtt-sent")
    assert (st.attrs["load_rtt"], st.attrs["past"]) == ("sent", "steady")


def test_sim_map_under_another_reading_keeps_the_first_maps_files(tmp_path):
    """The same map under --past steady, then under the default readings, in one --out: the second run wrote the
    same sim_map.* files and replaced the first map (its resume key told the two apart, its file names did not).
    Now the names carry the readings that differ from the defaults: both maps stay, byte for byte, each named
    in its JSON summary, and each resumes on its own (the same command again runs no point)."""
    toml = tmp_path / "s.toml"
    toml.write_text(SCENARIO.format(extra=""))
    out = tmp_path / "o"
    r = _sim_map(toml, out, "--past", "steady")
    assert r.exit_code == 0, r.output
    steady = {f: (out / f).read_bytes() for f in ("sim_map_past-steady.nc", "sim_map_past-steady.json")}
    assert json.loads(steady["sim_map_past-steady.json"])["files"]["netcdf"] == "sim_map_past-steady.nc"
    assert not (out / "sim_map.nc").exists()
    r = _sim_map(toml, out)
    assert r.exit_code == 0, r.output
    assert "holds" not in r.output  # no note of a stored map of other inputs or settings: a file of its own
    for f, data in steady.items():
        assert (out / f).read_bytes() == data, f"{f} was replaced"
    summary = json.loads((out / "sim_map.json").read_text())
    assert summary["files"]["netcdf"] == "sim_map.nc" and summary["past"] == "silent"
    st, ss = _stored(out), _stored(out, "sim_map_past-steady")
    assert (st.attrs["past"], ss.attrs["past"]) == ("silent", "steady")
    assert np.max(np.abs(st.queue_mean_pkts.values - ss.queue_mean_pkts.values)) > 0.05  # two different maps
    for extra in ((), ("--past", "steady")):  # each resumes from its own file
        r = _sim_map(toml, out, *extra)
        assert r.exit_code == 0, r.output
        assert _stored(out, "sim_map_past-steady" if extra else "sim_map").attrs["n_run"] == 0
    assert sorted(p.name for p in out.iterdir() if p.suffix in (".nc", ".json")) == [
        "sim_map.json", "sim_map.nc", "sim_map_past-steady.json", "sim_map_past-steady.nc"]
    # the figures tell the two maps apart too: the title names a reading that differs from the defaults
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from ecocc.plotting import plot_simulated_map
    axes = [plot_simulated_map(ds).axes for ds in (st, ss)]
    titles = [ax.get_title() for ax in axes]
    # and its axes in words: Symbiosis' epsilon_per_s from the roots map's table (stability.maps.WORDS)
    labels = (axes[0].get_xlabel(), axes[0].get_ylabel())
    plt.close("all")
    assert "past steady" not in titles[0] and "past steady" in titles[1].splitlines()[0]
    assert set(labels) == {"rate ε (1/s)", "RTT scale factor (-)"}


def test_readings_stem():
    from ecocc.cli_readings import readings_stem
    assert readings_stem("sim_map", "current", "silent") == "sim_map"
    assert readings_stem("sim_map", "sent", "silent") == "sim_map_load_rtt-sent"
    assert readings_stem("sim_map", "current", "steady") == "sim_map_past-steady"
    assert readings_stem("sim_map", "sent", "steady") == "sim_map_past-steady_load_rtt-sent"
    with pytest.raises(InputError):
        readings_stem("sim_map", "later", "silent")


@pytest.mark.parametrize("option, bad, allowed", [("--past", "bogus", "'steady'"), ("--load-rtt", "later", "'sent'")])
def test_sim_map_bad_reading_is_a_clean_error(tmp_path, option, bad, allowed):
    toml = tmp_path / "s.toml"
    toml.write_text(SCENARIO.format(extra=""))
    r = _sim_map(toml, tmp_path / "o", option, bad)
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and option in r.output and bad in r.output and allowed in r.output
    assert not (tmp_path / "o" / "sim_map.nc").exists()


# -- the lock-step kernel (compiles on a fresh machine: slow) ----------------------------------------------------

@pytest.mark.slow
def test_lock_step_map_follows_past():
    """The lock-step kernel reads the flows' start times from the systems (``start_s``, -inf for the flows sending
    before t = 0 under "steady"), so it runs past="steady" itself.  Each point against the compiled single run of
    it under the same reading.  Tolerance: the two runs take different steps (the map's shared steps may exceed
    the smallest delay and end at queue kinks), each keeping its local error per step within atol + rtol |q|; on
    these decaying runs the errors do not grow, so the two differ by at most the sum of those allowances over
    both runs' steps, (n_map + n_single) (atol_q + rtol max q) -- measured 5e-6 to 6e-5 packet against 9e-3 to
    1.4e-2.  The readings differ by more than 0.1 packet (0.18 to 0.78 here)."""
    pytest.importorskip("numba")
    model, net, params, y_name, _, _ = CASES["past"]
    kw = dict(y_name=y_name, y_values=[1.0, 1.95], **MAP, **params)
    maps = {}
    for past in ("silent", "steady"):
        ds = simulate_map(net(), model, engine="numba", past=past, **kw)
        assert ds.attrs["engine"] == "numba" and ds.attrs["past"] == past and (ds.status.values == "success").all()
        for i, e in enumerate(ds.y.values):
            for j, s in enumerate(ds.x.values):
                mean, swing, n_single = _single(net(), model, "past", past, rtt_scale=s, engine="numba",
                                                epsilon_per_s=e)
                qmax = max(float(np.max(mean + swing)), 1.0)
                tol = (int(ds.n_steps.values[i, j]) + n_single) * (1e-4 + RTOL * qmax)  # atol_q: default_atol
                assert np.max(np.abs(ds.queue_mean_pkts.values[i, j] - mean)) < tol
                assert np.max(np.abs(ds.queue_swing_pkts.values[i, j] - swing)) < tol
        maps[past] = ds.queue_mean_pkts.values
    assert np.max(np.abs(maps["silent"] - maps["steady"])) > 0.1


#: the coinciding models of SENT_CASES with a numeric parameter for the map's y axis (RED Reno coincided until its
#: signal read the load at its queue's bound, max_th: models.loss)
SENT_SAME = {"aecp": "alpha_per_s", "cltcp": "alpha_per_s", "petcp": "b_per_s", "symbiosis": "epsilon_per_s"}


@pytest.mark.slow
@pytest.mark.parametrize("model", sorted(SENT_SAME))
def test_lock_step_map_runs_sent_where_the_readings_coincide(model):
    """For a model whose delayed load does not read the queueing delay, load_rtt="sent" is the same equations as
    "current": the lock-step kernel runs it (engine="numba" was refused, "auto" ran one simulation per point) and
    gives the "current" map bit for bit; each point equals the compiled single run under "sent" (what "auto" ran
    before) within the allowance of test_lock_step_map_follows_past, (n_map + n_single) (atol_q + rtol max q) --
    measured 2e-6 to 1.2e-5 packet against 8.5e-3 to 1.3e-2 (AECP)."""
    pytest.importorskip("numba")
    from ecocc.models import get_model
    y_name = SENT_SAME[model]
    d = getattr(get_model(model).make_params(None), y_name)
    kw = dict(y_name=y_name, y_values=[d, 1.5 * d], **MAP)
    maps = {lr: simulate_map(_sym_net(), model, engine="numba", load_rtt=lr, **kw) for lr in ("current", "sent")}
    auto = simulate_map(_sym_net(), model, engine="auto", load_rtt="sent", **kw)
    assert auto.attrs["engine"] == "numba" and "engine_note" not in auto.attrs
    for ds in (maps["sent"], auto):
        assert ds.attrs["load_rtt"] == "sent" and (ds.status.values == "success").all()
        for v in ("queue_mean_pkts", "queue_swing_pkts", "n_steps"):
            np.testing.assert_array_equal(ds[v].values, maps["current"][v].values)
    ds = maps["sent"]
    for i, e in enumerate(ds.y.values):
        for j, s in enumerate(ds.x.values):
            mean, swing, n_single = _single(_sym_net(), model, "load_rtt", "sent", rtt_scale=s, engine="numba",
                                            **{y_name: e})
            qmax = max(float(np.max(mean + swing)), 1.0)
            tol = (int(ds.n_steps.values[i, j]) + n_single) * (1e-4 + RTOL * qmax)  # atol_q: default_atol
            assert np.max(np.abs(ds.queue_mean_pkts.values[i, j] - mean)) < tol
            assert np.max(np.abs(ds.queue_swing_pkts.values[i, j] - swing)) < tol


@pytest.mark.filterwarnings("error::UserWarning")  # its one-value y axis once set an empty ylim (a warning)
def test_stability_map_simulates_under_the_scenarios_readings(tmp_path, monkeypatch, simulate_readings_spy):
    """``ecocc stability-map SCENARIO --simulate X,Y`` simulates the point under the scenario file's readings (they
    were dropped: the simulated points ran silent/current); recorded as ``sim_past`` / ``sim_load_rtt``."""
    from ecocc.cli import main
    seen = simulate_readings_spy
    monkeypatch.setenv("ECOCC_ENGINE", "numpy")  # no compilation in the default suite
    toml = tmp_path / "s.toml"
    toml.write_text(SCENARIO.format(extra='past = "steady"\nload_rtt = "sent"'))
    out = tmp_path / "o"
    r = CliRunner().invoke(main, ["stability-map", str(toml), "--axis", "epsilon_per_s=1.95", "--axis", "rtt_s=0.1",
                                  "--simulate", "1.95,0.1", "--sim-t-end-s", "1", "--out", str(out), "--quiet"])
    assert r.exit_code == 0, r.output
    assert seen == [("steady", "sent")]
    import xarray as xr
    with xr.open_dataset(out / "stability_map_symbiosis.nc", engine="h5netcdf") as ds:
        assert (ds.attrs["sim_past"], ds.attrs["sim_load_rtt"]) == ("steady", "sent")


def test_sweep_readings_from_the_command_line(tmp_path):
    """``ecocc sweep --past/--load-rtt`` override the scenario's readings, are recorded (sweep.json, sweep.nc) and
    enter every point's key: the same sweep under the other reading is computed, never resumed from the first."""
    import xarray as xr

    from ecocc.cli import main
    toml = tmp_path / "s.toml"
    toml.write_text('[scenario]\nname = "s"\nmodel = "symbiosis"\nduration_s = 2.0\n[[links]]\nname = "b"\n'
                    'capacity_pps = 1000\nbuffer_pkts = 200\n[[flows]]\nname = "f1"\nroute = ["b"]\nrtt_s = 0.05\n'
                    'initial_rate_pps = 800\n[[flows]]\nname = "f2"\nroute = ["b"]\nrtt_s = 0.12\n'
                    'initial_rate_pps = 800\n')
    out = tmp_path / "sw"
    args = ["sweep", str(toml), "--axis", "rtt_scale=1", "--out", str(out), "--engine", "numpy", "--quiet"]
    r = CliRunner().invoke(main, args + ["--past", "steady"])
    assert r.exit_code == 0, r.output
    assert "0 done before, 1 run now" in r.output
    assert json.loads((out / "sweep.json").read_text())["past"] == "steady"
    with xr.open_dataset(out / "sweep.nc") as ds:
        steady = float(ds["mean_queue_pkts"].values.ravel()[0])
        assert ds.attrs["past"] == "steady" and ds.attrs["load_rtt"] == "current"
    r = CliRunner().invoke(main, args)  # the scenario's reading (silent): another key, computed
    assert r.exit_code == 0, r.output
    assert "0 done before, 1 run now" in r.output
    with xr.open_dataset(out / "sweep.nc") as ds:
        silent = float(ds["mean_queue_pkts"].values.ravel()[0])
        assert ds.attrs["past"] == "silent"
    # the readings differ on this case (the module docstring: ~0.3 packet at the end), so a dropped option fails
    assert abs(steady - silent) > 1e-3, (steady, silent)
    import dataclasses

    from ecocc import scenarios, sweeps
    sc = scenarios.load(str(toml))  # the same point with the reading in the scenario itself: the same run
    assert steady == sweeps.run_point(dataclasses.replace(sc, past="steady"), {}, engine="numpy")["mean_queue_pkts"]
    r = CliRunner().invoke(main, args + ["--load-rtt", "bogus"])
    assert r.exit_code == 2 and "--load-rtt = 'bogus' is not allowed" in r.output and "Traceback" not in r.output
