"""Sweeps: grid -> xarray, finished points kept, resume runs only what is missing."""
import numpy as np
import pytest

from ecocc.errors import InputError
from ecocc.sweeps import parse_axis, run_sweep


def test_parse_axis():
    assert parse_axis("alpha_per_s=1,2") == ("alpha_per_s", [1.0, 2.0])
    name, vals = parse_axis("T_s=1:3:3")
    assert name == "T_s" and np.allclose(vals, [1, 2, 3])
    with pytest.raises(InputError):
        parse_axis("alpha_per_s")
    with pytest.raises(InputError):
        parse_axis("alpha_per_s=a,b")


def test_sweep_resume_and_values(tmp_path):
    axes = {"alpha_per_s": [1.0, 2.0], "rtt_scale": [1.0, 10.0]}
    res = run_sweep("aecp-parking-lot", axes, tmp_path, t_end_s=60, progress=False)
    assert res.complete and res.n_run == 4
    ds = res.dataset
    assert ds["queue_p2p_pkts"].dims == ("alpha_per_s", "rtt_scale")
    # RTTs x1 (40/120 ms): alpha = 2 settles; x10 (0.4/1.2 s): the long flow's RTT is beyond the
    # critical delay 0.6435 s of the linearized loop at alpha = 2 -> sustained oscillation.
    # Thresholds: 1 packet vs 100 packets, far apart from both measured values.
    assert float(ds["queue_p2p_pkts"].sel(alpha_per_s=2.0, rtt_scale=1.0)) < 1.0
    assert float(ds["queue_p2p_pkts"].sel(alpha_per_s=2.0, rtt_scale=10.0)) > 100.0
    # resume: remove one finished point, only that one runs again
    files = sorted((tmp_path / "points").glob("*.json"))
    files[0].unlink()
    res2 = run_sweep("aecp-parking-lot", axes, tmp_path, t_end_s=60, progress=False)
    assert (res2.n_done_before, res2.n_run) == (3, 1)
    assert np.allclose(res2.dataset["utilization"].values, ds["utilization"].values, equal_nan=True)


def test_unknown_axis_is_rejected(tmp_path):
    with pytest.raises(InputError, match="foo"):
        run_sweep("aecp-parking-lot", {"foo": [1.0]}, tmp_path, progress=False)


def test_sweep_on_a_dask_cluster(tmp_path):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  host="127.0.0.1", protocol="tcp") as cl:  # loopback only
        res = run_sweep("aecp-parking-lot", {"alpha_per_s": [1.0, 2.0]}, tmp_path, t_end_s=20,
                        scheduler=cl.scheduler_address, progress=False)
    assert res.complete and res.n_run == 2
    # the same points run locally give the same numbers (the cluster only distributes the work)
    local = run_sweep("aecp-parking-lot", {"alpha_per_s": [1.0, 2.0]}, tmp_path / "local", t_end_s=20, progress=False)
    assert np.allclose(res.dataset["utilization"].values, local.dataset["utilization"].values)
