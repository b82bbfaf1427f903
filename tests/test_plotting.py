"""Plot structure (not pixels): lines, labels, legend placement, scales, reference lines, returned
artists, ax= honoured, keyword styling, PNG and PDF from the CLI."""
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import ecocc  # noqa: E402
from ecocc.errors import InputError  # noqa: E402
from ecocc.network import CrossTraffic, parking_lot  # noqa: E402
from ecocc.plotting import PARAM_LABELS, param_label, plot_trajectory  # noqa: E402

C = 1000.0  # packets/s: a small link keeps the runs short


@pytest.fixture(scope="module")
def tr():
    """AECP dumbbell: three flows of equal RTT (equal rates), one leaves at 12 s, constant cross traffic."""
    net = ecocc.dumbbell(C, [0.05, 0.05, 0.05], starts_s=[0.0, 2.0, 4.0], stops_s=[np.inf, np.inf, 12.0],
                         cross_traffic=[CrossTraffic("bottleneck", rate_pps=100.0)], name="test-dumbbell")
    return ecocc.simulate(net, "aecp", t_end_s=20.0, output_dt_s=0.02, summary_window_s=4.0)


@pytest.fixture(scope="module")
def tr_pl():
    """AECP parking lot 1000/500 packets/s: max-min shares differ (f1 gets 250, f2 750, f3 250)."""
    net = parking_lot([C, 0.5 * C], 0.01, name="test-parking-lot")
    return ecocc.simulate(net, "aecp", t_end_s=15.0, output_dt_s=0.02, summary_window_s=3.0)


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_param_label_words_with_units():
    assert param_label("alpha_per_s") == "source gain α (1/s)"
    assert param_label("rtt_scale") == "RTT scale factor (1)"
    # every parameter of every registered model and every sweep metric has words, no raw identifier
    from ecocc.models import REGISTRY, get_model
    from ecocc.sweeps import METRICS, SPECIAL_AXES
    names = {n for k in REGISTRY for n in get_model(k).Params.field_names()} | set(METRICS) | set(SPECIAL_AXES)
    for n in names:
        assert n in PARAM_LABELS, n
        lab = param_label(n)
        assert lab != n and "_" not in lab, lab  # words, not the identifier
    # fallback spells the unit suffix out
    assert param_label("hold_time_s") == "hold time (s)"


def test_trajectory_structure(tr):
    p = tr.plot()
    assert set(p.axes) == {"rate", "queue", "fairness"}
    assert len(p.lines["rate"]) == 3 and len(p.lines["queue"]) == 1 and len(p.lines["utilization"]) == 1
    assert [ln.get_label() for ln in p.lines["rate"]] == list(tr.flow_names)
    assert p.axes["rate"].get_ylabel() == "rate (Mbps, 1000-byte packets)"
    assert p.axes["queue"].get_ylabel().startswith("queue (packets)")
    assert p.axes["fairness"].get_ylabel() == "utilization, Jain's index (1)"
    assert p.axes["fairness"].get_xlabel() == "time (s)"
    title = p.figure._suptitle.get_text()
    assert "test-dumbbell" in title and "AECP" in title
    # no raw identifiers anywhere a user reads
    texts = [a.get_ylabel() for a in p.axes.values()] + [t.get_text() for lg in p.legends.values() for t in lg.get_texts()]
    assert not any("_per_s" in t or "_pkts" in t or "_pps" in t for t in texts)


def test_legends_outside_data(tr):
    p = tr.plot()
    p.figure.canvas.draw()
    r = p.figure.canvas.get_renderer()
    assert set(p.legends) == {"rate", "queue", "fairness"}
    for name, lg in p.legends.items():
        lb, ab = lg.get_window_extent(r), p.axes[name].get_window_extent(r)
        assert lb.x0 >= ab.x1, name  # entirely to the right of the data area
        assert lb.x1 <= p.figure.bbox.x1 + 0.5, name  # and inside the figure (0.5 px: rounding)


def test_left_flow_not_drawn_after_stop(tr):
    p = tr.plot()
    y = np.asarray(p.lines["rate"][2].get_ydata(), dtype=float)
    t = np.asarray(p.lines["rate"][2].get_xdata(), dtype=float)
    assert np.all(np.isnan(y[t >= 12.0])) and np.all(np.isnan(y[t < 4.0]))
    assert np.isfinite(y[(t > 4.0) & (t < 12.0)]).all()


def test_equal_flows_distinguishable_and_named(tr):
    p = tr.plot()
    lines = p.lines["rate"]
    # distinct dashes, markers and widths, so a curve on top of another does not hide it
    assert len({str(ln.get_linestyle()) + str(ln.get_dashes() if hasattr(ln, "get_dashes") else "") for ln in lines}) == 3
    assert len({ln.get_marker() for ln in lines}) == 3
    assert len({ln.get_markevery() for ln in lines}) == 3
    # the three equal-RTT flows coincide while active together; the legend says so
    assert p.coincident == [("f1", "f2", "f3")]
    assert "coincide" in p.legends["rate"].get_title().get_text()


def test_queue_reference_and_scale(tr):
    p = tr.plot()
    refs = p.lines["queue_ref"]
    assert len(refs) == 1 and refs[0].get_ydata()[0] == 100.0  # AECP default q0 = 100 packets
    assert "target queue q0 = 100 packets" in refs[0].get_label()
    for scale in ("symlog", "log", "linear"):
        q = plot_trajectory(tr, queue_scale=scale)
        assert q.axes["queue"].get_yscale() == scale and q.queue_scale == scale
    # auto: the start-up queue of this run exceeds ten times q0 -> symlog (checked from the data)
    expect = "symlog" if tr.queue_pkts.max() > 1000 else "linear"
    assert p.queue_scale == expect and p.axes["queue"].get_yscale() == expect
    with pytest.raises(InputError):
        plot_trajectory(tr, queue_scale="loglog")


def test_cross_traffic_drawn(tr):
    p = tr.plot()
    assert len(p.fills["cross"]) == 1 and len(p.lines["cross"]) == 1
    assert "cross traffic on bottleneck" in p.fills["cross"][0].get_label()
    y = np.asarray(p.lines["cross"][0].get_ydata(), dtype=float)
    assert np.allclose(y, ecocc.units.pps_to_mbps(100.0, 1000.0))  # the constant 100 packets/s offered


def test_fairness_labels(tr, tr_pl):
    # f3 leaves at 12 s: the model's equilibrium of all three flows does not hold in the final window, so no
    # x* line is drawn on the rate panel; the trajectory's equilibrium is that of the two flows active at the
    # end (f3 NaN), which share equally: the fairness label says so
    x_eq = np.asarray(tr.equilibrium["rate_pps"], dtype=float)
    assert np.isnan(x_eq[2]) and np.isfinite(x_eq[:2]).all()
    assert x_eq[0] == pytest.approx(x_eq[1], rel=1e-12)  # equal RTTs: equal shares (closed form, same formula)
    assert tr.plot().lines["rate_ref"] == []
    single = tr.plot().lines["fairness"]
    assert len(single) == 1 and "Jain's index of rates" in single[0].get_label()
    assert "equal shares at the model equilibrium" in single[0].get_label()
    p = tr_pl.plot()
    labels = [ln.get_label() for ln in p.lines["fairness"]]
    assert any("x_i / x_i*" in lab for lab in labels)
    assert any("raw rates (not max-min)" in lab for lab in labels)
    assert not any(lab.lower().startswith("fairness") for lab in labels)
    assert len(p.lines["queue"]) == 2 and len(p.lines["rate_ref"]) == 2  # two distinct max-min shares


def test_ax_honoured_and_returned(tr):
    fig, axs = plt.subplots(3, 1)
    n = len(plt.get_fignums())
    p = plot_trajectory(tr, ax=axs)
    assert len(plt.get_fignums()) == n and p.figure is fig
    assert [p.axes[k] for k in ("rate", "queue", "fairness")] == list(axs)
    fig2, ax = plt.subplots()
    q = tr.plot(ax=ax, panels=("queue",))
    assert list(q.axes) == ["queue"] and q.axes["queue"] is ax and ax.get_title().startswith("Scenario")
    with pytest.raises(InputError):
        plot_trajectory(tr, ax=ax)  # one Axes for three panels


def test_fig_keyword_deprecated(tr):
    fig = plt.figure()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        p = plot_trajectory(tr, fig=fig)
    assert any(issubclass(x.category, DeprecationWarning) for x in w)
    assert p.figure is fig and len(fig.axes) == 3


def test_style_keywords(tr):
    p = tr.plot(rate_kw=dict(lw=0.5), queue_kw=dict(color="k"), alpha=0.7)
    assert all(ln.get_linewidth() == 0.5 for ln in p.lines["rate"])
    assert all(ln.get_alpha() == 0.7 for ln in p.lines["rate"] + p.lines["queue"])
    assert matplotlib.colors.same_color(p.lines["queue"][0].get_color(), "k")


def test_plot_sweep_labels_and_ax():
    import xarray as xr
    from ecocc.sweeps import plot_sweep
    ds = xr.Dataset({"queue_p2p_pkts": (("alpha_per_s",), [1.0, 2.0, 5.0], {"units": "packets"})},
                    coords={"alpha_per_s": [1.0, 2.0, 3.0]}, attrs={"scenario": "s", "model": "aecp"})
    fig, ax = plt.subplots()
    res = plot_sweep(ds, "queue_p2p_pkts", ax=ax, color="r")
    assert res.axes is ax and len(res.lines) == 1 and matplotlib.colors.same_color(res.lines[0].get_color(), "r")
    assert ax.get_xlabel() == "source gain α (1/s)"
    assert ax.get_ylabel() == "queue swing over the final window, peak to peak (packets)"
    assert "AECP" in ax.get_title()


def test_cli_writes_png_and_pdf(tmp_path):
    from click.testing import CliRunner
    from ecocc.cli import main
    r = CliRunner().invoke(main, ["simulate", "aecp-parking-lot", "--out", str(tmp_path), "--quiet",
                                  "--t-end-s", "3", "--no-checkpoint"])
    assert r.exit_code == 0, r.output
    png, pdf = tmp_path / "aecp-parking-lot.png", tmp_path / "aecp-parking-lot.pdf"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert pdf.read_bytes()[:5] == b"%PDF-"
    r = CliRunner().invoke(main, ["simulate", "aecp-parking-lot", "--out", str(tmp_path / "svg"), "--quiet",
                                  "--t-end-s", "3", "--no-checkpoint", "--format", "svg"])
    assert r.exit_code == 0 and (tmp_path / "svg" / "aecp-parking-lot.svg").exists()
    assert not (tmp_path / "svg" / "aecp-parking-lot.png").exists()
    r = CliRunner().invoke(main, ["simulate", "aecp-parking-lot", "--out", str(tmp_path), "--format", "gif"])
    assert r.exit_code == 2 and "--format" in r.output


def test_red_thresholds_named_when_off_axis():
    """Reno/RED: a threshold above a linear queue axis is named in the legend, not drawn off the axis."""
    net = ecocc.dumbbell(C, [0.05, 0.1], name="test-reno")
    tr = ecocc.simulate(net, "reno", t_end_s=10.0, output_dt_s=0.02, summary_window_s=2.0)
    p = tr.plot(queue_scale="linear")
    top = p.axes["queue"].get_ylim()[1]
    drawn = [ln.get_ydata()[0] for ln in p.lines["queue_ref"]]
    assert all(v <= top for v in drawn)
    labels = " ".join(ln.get_label() for ln in p.lines["queue_ref"])
    if top < 550.0:  # RenoParams default red_max_th_pkts = 550 packets
        assert "maximum 550 packets: above the axis" in labels
    p = tr.plot(queue_scale="symlog")  # a log axis has room for both thresholds
    assert sorted(ln.get_ydata()[0] for ln in p.lines["queue_ref"]) == [50.0, 550.0]


def _sim_map_ds():
    """The variables plot_simulated_map reads from a simulate_map dataset (ecocc.batch), on a 2 x 3 grid:
    regimes 0 (settled), 1 (decaying), 2 (growing) and one failed run."""
    import xarray as xr
    swing = np.array([[[1e-3], [0.5], [3.0]], [[1e-4], [2.0], [np.nan]]])
    regime = np.array([[0, 1, 2], [0, 2, -1]])
    status = np.array([["success"] * 3, ["success", "success", "failed"]])
    return xr.Dataset({"queue_swing_pkts": (("y", "x", "link"), swing), "stable": (("y", "x"), regime == 0),
                       "regime": (("y", "x"), regime), "status": (("y", "x"), status)},
                      coords={"x": [1.0, 2.0, 3.0], "y": [0.5, 1.0]},
                      attrs={"swing_threshold_pkts": 1.0, "scenario": "s", "model": "aecp", "verdict": "v"})


def test_map_plots_take_ax_and_styles_and_return_artists():
    from ecocc.plotting import MapPlot, plot_simulated_map
    from ecocc.stability import plot_stability_map, stability_map
    ds = _sim_map_ds()
    fig, (a1, a2) = plt.subplots(1, 2)
    n = len(plt.get_fignums())
    p = plot_simulated_map(ds, ax=a1, cmap="magma", marker_kw=dict(ms=7), boundary_kw=dict(colors="r"),
                           title=False)
    assert isinstance(p, MapPlot) and p.axes is a1 and p.figure is fig and len(plt.get_fignums()) == n
    assert p.mesh in a1.collections and p.mesh.get_cmap().name == "magma"
    # one marker line per regime present, the markers as asked; the failed run marked by status
    assert [len(p.lines[k][0].get_xdata()) for k in ("settled", "decaying_not_settled", "growing_or_limit_cycle")] \
        == [2, 1, 2]
    assert all(ln.get_markersize() == 7 for v in p.lines.values() for ln in v)
    assert len(p.lines["status:failed"][0].get_xdata()) == 1
    assert matplotlib.colors.same_color(p.contours["boundary"].get_edgecolor()[0], "r")
    assert a1.get_title() == "" and p.legend is a1.get_legend()
    assert any("settled (2 points of 6)" in t.get_text() for t in p.legend.get_texts())
    with pytest.raises(InputError):
        plot_simulated_map(ds, ax=a1, legend="below")   # below the axes needs a figure of its own
    # the linear map: real dataset (2 x 2, AECP: stable at RTT 0.3 s, unstable at 0.9 s for alpha = 2)
    sm = stability_map("aecp", x_values=[1.0, 2.0], y_values=[0.3, 0.9], n_nodes=24)
    q = plot_stability_map(sm, ax=a2, cmap="PuOr", colorbar=False, legend=None)
    assert q.axes is a2 and q.mesh.get_cmap().name == "PuOr" and q.colorbar is None and q.legend is None
    assert "boundary" in q.contours and len(q.lines["critical_delay"]) == 1
    # figures of their own: the linear map's legend inside its axes, the simulated map's below them
    r = plot_stability_map(sm)
    assert r.figure is not fig and r.colorbar is not None and "boundary" in r.contours
    assert r.legend is r.axes.get_legend() and r.axes.get_title().startswith("Linear stability")
    s2 = plot_simulated_map(ds)
    assert s2.figure is not fig and s2.legend in s2.figure.legends and s2.axes.get_legend() is None
