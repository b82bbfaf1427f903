"""Results are never lost or stale: SIGKILL at random moments, rerun, compare with an uninterrupted run;
another scenario or an edited one is never served from old results; one process per --out; names stay
inside --out."""
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

ROOT = Path(__file__).resolve().parents[1]
ENV = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")

SWEEP = ["sweep", "aecp-parking-lot", "--axis", "alpha_per_s=1,2,4", "--t-end-s", "3", "--metric", "utilization",
         "--quiet"]
SIMMAP = ["sim-map", "aecp-parking-lot", "--axis", "alpha_per_s=1,4", "--axis", "rtt_scale=0.5,2", "--t-end-s", "3",
          "--window-s", "1", "--engine", "numpy", "--save-every-s", "0", "--quiet", "--no-figure", "--json"]
SIMULATE = ["simulate", "aecp-parking-lot", "--t-end-s", "5", "--quiet", "--no-figure", "--json"]


class _Result:
    def __init__(self, code, stdout, stderr):
        self.returncode, self.stdout, self.stderr = code, stdout, stderr


def cli(args, out, timeout=None):
    """The command in this process (click's CliRunner; no interpreter start-up): returncode, stdout, stderr."""
    from click.testing import CliRunner

    from ecocc.cli import main
    r = CliRunner().invoke(main, [*args, "--out", str(out)], catch_exceptions=False)
    return _Result(r.exit_code, r.stdout, r.stderr)


def cli_subprocess(args, out, timeout=300):
    return subprocess.run([sys.executable, "-m", "ecocc", *args, "--out", str(out)], env=ENV, capture_output=True,
                          text=True, timeout=timeout)


def killed_at(args, out, delay_s):
    """Start the command and SIGKILL it after ``delay_s`` seconds (if it is still running)."""
    p = subprocess.Popen([sys.executable, "-m", "ecocc", *args, "--out", str(out)], env=ENV,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(delay_s)
    if p.poll() is None:
        p.send_signal(signal.SIGKILL)
    p.wait()


def sweep_numbers(out):
    with xr.open_dataset(Path(out) / "sweep.nc", engine="h5netcdf") as ds:
        return {v: ds[v].values.copy() for v in ds.data_vars}


def simmap_numbers(out):
    with xr.open_dataset(Path(out) / "sim_map.nc", engine="h5netcdf") as ds:
        return {v: ds[v].values.copy() for v in ("status", "queue_swing_pkts", "queue_mean_pkts", "n_steps")}


def simulate_numbers(out):
    with xr.open_dataset(Path(out) / "aecp-parking-lot.nc", engine="h5netcdf") as ds:
        return {v: ds[v].values.copy() for v in ("rate", "queue", "lost")}


def same(a, b):
    # exact: the rerun computes the missing points with the same code and inputs, and the NumPy solver is
    # deterministic, so a resumed result must equal the uninterrupted one bit for bit
    assert a.keys() == b.keys()
    for k in a:
        if a[k].dtype.kind in "fc":
            np.testing.assert_array_equal(a[k], b[k], err_msg=k)
        else:
            assert (a[k] == b[k]).all(), k


CASES = {"sweep": (SWEEP, sweep_numbers), "sim-map": (SIMMAP, simmap_numbers), "simulate": (SIMULATE, simulate_numbers)}


def _kill_rerun_compare(name, tmp_path, delays):
    args, numbers = CASES[name]
    ref = cli(args, tmp_path / "ref")
    assert ref.returncode == 0, ref.stderr
    expected = numbers(tmp_path / "ref")
    for i, d in enumerate(delays):
        out = tmp_path / f"killed{i}"
        killed_at(args, out, d)
        again = cli(args, out)
        assert again.returncode == 0, (d, again.stderr)
        same(numbers(out), expected)
        assert not list(out.glob("*.ckpt.npz")) and not list(out.glob(".*.ckpt.npz"))  # checkpoint gone after outputs


@pytest.mark.parametrize("name", list(CASES))
def test_kill_at_a_random_moment_then_rerun(name, tmp_path):
    # one kill per command, at a seeded random moment inside the ~2-6 s a process lives here (start-up included)
    _kill_rerun_compare(name, tmp_path, [random.Random(name).uniform(1.0, 4.0)])


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
def test_kill_at_many_random_moments(name, tmp_path):
    rng = random.Random(20261123)
    _kill_rerun_compare(name, tmp_path, [rng.uniform(0.2, 6.0) for _ in range(6)])


def test_another_or_edited_scenario_is_not_served_from_old_points(tmp_path):
    out = tmp_path / "S"
    a = cli(["sweep", "aecp-parking-lot", "--axis", "alpha_per_s=1,2", "--t-end-s", "0.5", "--metric", "utilization",
             "--quiet"], out)
    assert a.returncode == 0, a.stderr
    b = cli(["sweep", "aecp-dumbbell", "--axis", "alpha_per_s=1,2", "--t-end-s", "0.5", "--metric", "utilization",
             "--quiet"], out)
    assert b.returncode == 0, b.stderr
    assert "0 done before, 2 run now" in b.stdout
    with xr.open_dataset(out / "sweep.nc", engine="h5netcdf") as ds:
        assert ds.attrs["scenario"] == "aecp-dumbbell"
        # the dumbbell has one link: f1 alone at 0.5 s (f2 joins at 50 s), not the parking lot's numbers
        u = ds["utilization"].values.copy()
    # an edited scenario file: same name, other capacity -> recomputed
    from ecocc import scenarios
    text = (Path(scenarios.__file__).parent / "data" / "aecp-dumbbell.toml").read_text()
    f = tmp_path / "mine.toml"
    f.write_text(text)
    c = cli(["sweep", str(f), "--axis", "alpha_per_s=1,2", "--t-end-s", "0.5", "--metric", "utilization", "--quiet"], out)
    assert "0 done before" not in c.stdout  # identical contents: reused
    f.write_text(text.replace("capacity_mbps = 500", "capacity_mbps = 400"))
    d = cli(["sweep", str(f), "--axis", "alpha_per_s=1,2", "--t-end-s", "0.5", "--metric", "utilization", "--quiet"], out)
    assert "0 done before, 2 run now" in d.stdout, d.stdout
    with xr.open_dataset(out / "sweep.nc", engine="h5netcdf") as ds:
        assert not np.array_equal(ds["utilization"].values, u)


def test_sim_map_notices_an_edited_scenario_and_a_truncated_file(tmp_path):
    from ecocc import scenarios
    text = (Path(scenarios.__file__).parent / "data" / "aecp-parking-lot.toml").read_text()
    f = tmp_path / "pl.toml"
    f.write_text(text)
    args = [str(f) if a == "aecp-parking-lot" else ("1" if a == "3" else a) for a in SIMMAP]
    args[args.index("--window-s") + 1] = "0.5"
    out = tmp_path / "out"
    assert cli(args, out).returncode == 0
    again = cli(args, out)
    assert json.loads(again.stdout)["counts"]["points"] == 4
    with xr.open_dataset(out / "sim_map.nc", engine="h5netcdf") as ds:
        assert ds.attrs["n_run"] == 0  # same inputs: nothing recomputed
    f.write_text(text + "\n[params]\nbeta_per_s = 0.9\n")  # an edited file: a model parameter added
    edited = cli(args, out)
    assert edited.returncode == 0, edited.stderr
    assert "other inputs" in edited.stderr
    with xr.open_dataset(out / "sim_map.nc", engine="h5netcdf") as ds:
        assert ds.attrs["n_run"] == 4
    data = (out / "sim_map.nc").read_bytes()
    (out / "sim_map.nc").write_bytes(data[: len(data) // 3])  # as a kill during a non-atomic write left it
    cut = cli(args, out)
    assert cut.returncode == 0, cut.stderr
    assert "unreadable" in cut.stderr and "Traceback" not in cut.stderr


def test_two_processes_on_one_out_are_refused(tmp_path):
    from ecocc.store import OutputLock
    with OutputLock(tmp_path / "o"):
        r = cli_subprocess(SIMULATE, tmp_path / "o")  # another process
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "locked by pid" in r.stderr and "--out" in r.stderr


def test_scenario_name_cannot_escape_out(tmp_path):
    from ecocc import scenarios
    text = (Path(scenarios.__file__).parent / "data" / "aecp-dumbbell.toml").read_text()
    f = tmp_path / "esc.toml"
    f.write_text(text.replace('name = "aecp-dumbbell"', 'name = "../../escaped"'))
    out = tmp_path / "a" / "b" / "out"
    r = cli(["simulate", str(f), "--t-end-s", "0.5", "--quiet", "--no-figure"], out)
    assert r.returncode == 0, r.stderr
    assert (out / "escaped.nc").exists()
    # every file of the run is inside --out: none two levels up (where "../../escaped" pointed) or elsewhere
    assert not (tmp_path / "a" / "escaped.nc").exists()
    assert {p.parent for p in tmp_path.rglob("escaped*")} == {out}


REPRODUCE = ["reproduce", "iguchi-fig1", "--json", "--quiet"]  # 4 runs, ~20 s on a loaded 2-core machine


def reproduce_records(stdout):
    return json.loads(stdout)["records"]  # timings left out: they differ from run to run


@pytest.mark.slow  # ~1-2 min: an uninterrupted reproduce, then two killed ones and their reruns
def test_reproduce_killed_then_rerun_gives_the_uninterrupted_results(tmp_path):
    # reproduce keeps no partial results: a rerun runs everything again; what matters is that a kill (here
    # at seeded random moments inside the ~20 s the process lives, the last one late, when figures are being
    # written) never leaves a torn figure or litter, and the rerun gives the uninterrupted run's records
    # and figures
    ref = cli(REPRODUCE, tmp_path / "ref")
    assert ref.returncode == 0, ref.stderr
    expected = reproduce_records(ref.stdout)
    png_ref = (tmp_path / "ref" / "iguchi-fig1.png").read_bytes()
    rng = random.Random("reproduce")
    for i, d in enumerate([rng.uniform(1.0, 10.0), rng.uniform(10.0, 25.0)]):
        out = tmp_path / f"killed{i}"
        killed_at(REPRODUCE, out, d)
        for f in out.glob("iguchi-fig1.*") if out.exists() else ():
            # a figure present after the kill is whole (written to a temporary file and renamed)
            data = f.read_bytes()
            assert data.startswith(b"\x89PNG") and data.endswith(b"IEND\xaeB`\x82") if f.suffix == ".png" \
                else data.rstrip().endswith(b"%%EOF"), (d, f)
        again = cli(REPRODUCE, out)
        assert again.returncode == 0, (d, again.stderr)
        # exact: the same runs with the same code and inputs (a deterministic solver) give the same numbers
        assert reproduce_records(again.stdout) == expected
        # matplotlib writes no timestamp into a PNG: the same figure, byte for byte
        assert (out / "iguchi-fig1.png").read_bytes() == png_ref
        assert (out / "iguchi-fig1.pdf").read_bytes().rstrip().endswith(b"%%EOF")
        assert sorted(p.name for p in out.iterdir()) == [".ecocc.lock", "iguchi-fig1.pdf", "iguchi-fig1.png"]


def test_reproduce_refuses_a_locked_out(tmp_path):
    from ecocc.store import OutputLock
    with OutputLock(tmp_path / "o"):
        r = cli_subprocess(["reproduce", "iguchi-fig1", "--quiet"], tmp_path / "o")  # another process
    assert r.returncode == 2 and "Traceback" not in r.stderr and "locked by pid" in r.stderr
