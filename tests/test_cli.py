"""The CLI: outputs, JSON summary, and clean errors for user mistakes."""
import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from ecocc.cli import main
from ecocc.dde.engine import HAVE_NUMBA


def run(args):
    return CliRunner().invoke(main, args, catch_exceptions=False)


def test_simulate_parking_lot_json(tmp_path):
    res = run(["simulate", "aecp-parking-lot", "--out", str(tmp_path), "--json", "--quiet", "--t-end-s", "40"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.output)
    assert d["status"] == "success"
    rates = {f["name"]: f["mean_rate_mbps"] for f in d["flows"]}
    # max-min fair allocation of 500/250/500 Mbps computed independently by hand:
    # l2 (250) shared by f1 and f3 -> 125 each; f2 and f4 get 500 - 125 = 375.
    # 1e-4 relative: the run has settled to ~1e-9 by 30 s (the window is 36-40 s).
    assert rates == pytest.approx({"f1": 125, "f2": 375, "f3": 125, "f4": 375}, rel=1e-4)
    for lk in d["links"]:
        assert {"name", "mean_queue_pkts", "utilization"} <= set(lk)
    for suffix in (".nc", "_flows.csv", "_links.csv", "_summary.json", ".png"):
        assert (tmp_path / f"aecp-parking-lot{suffix}").exists()


def test_netcdf_roundtrip(tmp_path):
    import xarray as xr
    res = run(["simulate", "aecp-parking-lot", "--out", str(tmp_path), "--quiet", "--t-end-s", "5", "--no-figure"])
    assert res.exit_code == 0, res.output
    ds = xr.open_dataset(tmp_path / "aecp-parking-lot.nc", engine="h5netcdf")
    assert ds["rate"].attrs["units"] == "packets/s"
    assert list(ds["flow"].values) == ["f1", "f2", "f3", "f4"]
    assert ds.attrs["status"] == "success"
    ds.close()


@pytest.mark.parametrize("content, expected", [
    ("[scenario]\nname='x'\n", "[scenario].model"),
    ("[scenario\nname=", "malformed TOML"),
    ("[scenario]\nname='x'\nmodel='aecp'\nduration_s=1\n[[links]]\nname='a'\ncapacity_pps=-5\n"
     "[[flows]]\nname='f'\nroute=['a']\nrtt_s=0.1\n", "capacity_pps"),
    ("[scenario]\nname='x'\nmodel='aecp'\nduration_s=1\n[[links]]\nname='a'\ncapacity_pps=5\n"
     "[[flows]]\nname='f'\nroute=['b']\nrtt_s=0.1\n", "route"),
    ("[scenario]\nname='x'\nmodel='aecp'\nduration_s=1\n[[links]]\nname='a'\ncapacity_pps=5\n"
     "[[flows]]\nname='f'\nroute=['a']\nrtt_s=0\n", "rtt_s"),
    ("[scenario]\nname='x'\nmodel='aecp'\nduration_s=1\n[[links]]\nname='a'\ncapacity_pps=5\n"
     "[[flows]]\nname='f'\nroute=['a']\nrtt_s=0.1\nstart_s=5\nstop_s=2\n", "stop_s"),
    ("[scenario]\nname='x'\nmodel='nope'\nduration_s=1\n", "model"),
])
def test_bad_scenario_files_give_one_line_errors(tmp_path, content, expected):
    p = tmp_path / "bad.toml"
    p.write_text(content)
    proc = subprocess.run([sys.executable, "-m", "ecocc.cli", "simulate", str(p), "--out", str(tmp_path), "--quiet"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert expected in proc.stderr
    assert "is not allowed" in proc.stderr


@pytest.mark.parametrize("args, expected", [
    (["--set", "alpha_per_s=-1"], "alpha_per_s"),
    (["--set", "foo=1"], "foo"),
    (["--set", "noequals"], "NAME=VALUE"),
])
def test_bad_overrides(tmp_path, args, expected):
    proc = subprocess.run([sys.executable, "-m", "ecocc.cli", "simulate", "aecp-parking-lot", "--out", str(tmp_path),
                           "--quiet"] + args, capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert expected in proc.stderr


def test_unknown_scenario_lists_shipped():
    res = CliRunner().invoke(main, ["simulate", "no-such-scenario"])
    assert res.exit_code == 2
    assert "aecp-dumbbell" in res.output


def test_sim_map_tiny_grid(tmp_path):
    import xarray as xr
    res = run(["sim-map", "--axis", "alpha_per_s=1,4", "--axis", "rtt_scale=0.5,2", "--t-end-s", "10", "--window-s", "2",
               "--engine", "numpy", "--out", str(tmp_path), "--json", "--quiet"])
    assert res.exit_code == 0, res.output
    for name in ("sim_map.nc", "sim_map.json", "sim_map.png"):
        assert (tmp_path / name).exists()
    d = json.loads(res.output)
    assert d == json.loads((tmp_path / "sim_map.json").read_text())
    assert (d["scenario"], d["model"], d["engine"]) == ("aecp-parking-lot", "aecp", "numpy")
    assert (d["x"]["name"], d["x"]["values"]) == ("alpha_per_s", [1.0, 4.0])
    assert (d["y"]["name"], d["y"]["values"]) == ("rtt_scale", [0.5, 2.0])
    c = d["counts"]
    assert c["points"] == 4
    classes = ("settled", "decaying_not_settled", "growing_or_limit_cycle", "not_classified")
    assert sum(c[k] for k in classes) + c["failed"] + c["interrupted"] == 4
    with xr.open_dataset(tmp_path / "sim_map.nc", engine="h5netcdf") as ds:
        assert ds["stable"].shape == (2, 2)
        assert ds["queue_swing_pkts"].dims == ("y", "x", "link")
        assert ds["queue_swing_pkts"].shape == (2, 2, 3)  # the parking lot's three links
        assert list(ds["x"].values) == [1.0, 4.0]
        assert int(ds["stable"].sum()) == c["settled"]
        assert int((ds["status"] == "success").sum()) == sum(c[k] for k in classes)
        for code, k in enumerate(classes[:3]):
            assert int((ds["regime"] == code).sum()) == c[k]


@pytest.mark.parametrize("args, expected", [
    (["--x", "alpha_per_s=1:2"], "--x alpha_per_s"),
    (["--x", "nosuch_param=1,2"], "nosuch_param"),
    (["--y", "rtt_scale=-1,2"], "--y rtt_scale[0]"),
    (["--axis", "alpha_per_s=1,2", "--axis", "rtt_scale=-1,2"], "--axis rtt_scale[0]"),
    (["--axis", "alpha_per_s=1,2"], "exactly two axes"),
    (["--axis", "alpha_per_s=1,2", "--y", "rtt_scale=1"], "not both"),
    (["--t-end-s", "5", "--window-s", "10"], "--window-s"),
    pytest.param(["--x", "r0_pps=1,2", "--engine", "numba"], "engine='numba'",
                 marks=pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")),
])
def test_sim_map_bad_input(tmp_path, args, expected):
    proc = subprocess.run([sys.executable, "-m", "ecocc.cli", "sim-map", "--out", str(tmp_path / "out"), "--quiet",
                           "--no-figure"] + args, capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert expected in proc.stderr
    assert "is not allowed" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_sim_map_rerun_keeps_finished_points(tmp_path):
    """The same command again reuses the NetCDF in --out (nothing left to run); other settings recompute."""
    def args(window="2"):
        return ["sim-map", "--axis", "alpha_per_s=1,4", "--axis", "rtt_scale=0.5,2", "--t-end-s", "10", "--window-s", window,
                "--engine", "numpy", "--out", str(tmp_path), "--json", "--quiet", "--no-figure"]
    first = run(args())
    assert first.exit_code == 0, first.output
    import xarray as xr
    again = run(args())
    assert again.exit_code == 0, again.output
    with xr.open_dataset(tmp_path / "sim_map.nc", engine="h5netcdf") as ds:
        assert ds.attrs["n_run"] == 0
    other = run(args(window="3"))
    assert other.exit_code == 0, other.output
    with xr.open_dataset(tmp_path / "sim_map.nc", engine="h5netcdf") as ds:
        assert ds.attrs["n_run"] == 4


@pytest.mark.slow  # compiles the lock-step kernel on a fresh machine
@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")
def test_sim_map_steps_within_delay_flag(tmp_path):
    """--steps-within-delay switches the compiled map to the NumPy solver's step rule; the choice is recorded
    in the NetCDF attributes and the verdicts agree on this grid."""
    import xarray as xr
    solvers, stable = {}, {}
    for flag in ([], ["--steps-within-delay"]):
        out = tmp_path / ("capped" if flag else "default")
        res = run(["sim-map", "--axis", "alpha_per_s=1,4", "--axis", "rtt_scale=0.5,2", "--t-end-s", "20", "--window-s", "4",
                   "--engine", "numba", "--out", str(out), "--json", "--quiet", "--no-figure"] + flag)
        assert res.exit_code == 0, res.output
        with xr.open_dataset(out / "sim_map.nc", engine="h5netcdf") as ds:
            solvers[bool(flag)] = ds.attrs["solver"]
            stable[bool(flag)] = ds["stable"].values.copy()
    assert "may exceed the smallest delay" in solvers[False]
    assert "never longer than the smallest delay" in solvers[True]
    assert (stable[False] == stable[True]).all()


def test_sim_map_old_axis_options_still_work_with_a_note(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "ecocc", "sim-map", "--x", "alpha_per_s=1,4", "--y", "rtt_scale=1",
                           "--t-end-s", "2", "--window-s", "1", "--engine", "numpy", "--out", str(tmp_path), "--quiet",
                           "--no-figure", "--json"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "deprecated" in proc.stderr and "--axis" in proc.stderr
    assert json.loads(proc.stdout)["x"]["values"] == [1.0, 4.0]


@pytest.mark.skipif(not HAVE_NUMBA, reason="overlap is a compiled-kernel option")
def test_simulate_overlap_flag(tmp_path):
    # the flag reaches the compiled solver (recorded in the run's settings) and changes its method: on the parking
    # lot (RTTs 40 and 120 ms) the capped run takes 141 steps in 5 s, the overlap run 92 (measured); the test asks
    # only for fewer, which a flag that were dropped on the way could not give
    import xarray as xr
    base = ["simulate", "aecp-parking-lot", "--quiet", "--t-end-s", "5", "--no-figure", "--engine", "numba"]
    steps = {}
    for flag in (False, True):
        out = tmp_path / str(flag)
        res = run(base + ["--out", str(out)] + (["--overlap"] if flag else []))
        assert res.exit_code == 0, res.output
        solver = json.loads(xr.open_dataset(out / "aecp-parking-lot.nc", engine="h5netcdf").attrs["solver"])
        assert solver["overlap"] is flag
        steps[flag] = solver["n_steps"]
    assert steps[True] < steps[False]


def test_simulate_overlap_on_numpy_is_a_clear_error(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "ecocc.cli", "simulate", "aecp-parking-lot", "--out", str(tmp_path),
                           "--quiet", "--engine", "numpy", "--overlap", "--t-end-s", "1"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "overlap" in proc.stderr and "engine='numpy'" in proc.stderr


@pytest.mark.parametrize("t_end, window", [(20.0, 10.0), (15.0, 1.5)])
def test_sim_map_default_window_leaves_room_for_the_window_before(tmp_path, t_end, window):
    # aecp-parking-lot's summary window is 10 s: used when the run is at least twice as long (the decay test
    # compares the last window with the one before it); with --t-end-s 15 a 10 s window left no window before,
    # and most points came out "not classified" (Reno's dumbbell, 50 s window, --t-end-s 60: 46 of 144), so a
    # tenth of the run is used, as the option's help says
    res = run(["sim-map", "--axis", "alpha_per_s=1,4", "--axis", "rtt_scale=0.5,2", "--t-end-s", str(t_end),
               "--out", str(tmp_path), "--quiet"])
    assert res.exit_code == 0, res.output
    # the summary file (the captured output also holds the one-line notice of a first kernel build, on stderr)
    d = json.loads((tmp_path / "sim_map.json").read_text())
    assert d["window_s"] == pytest.approx(window)
