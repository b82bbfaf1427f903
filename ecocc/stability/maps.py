"""Stability over a parameter plane, with optional simulation samples."""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from .analysis import analyze, simulate_decay

_UNITS = {"rtt_s": "s", "capacity_pps": "packets/s", "n_flows": "flows"}


#: axis names in words for the map figures
WORDS = {"rtt_s": "round-trip time", "capacity_pps": "bottleneck capacity", "n_flows": "number of flows",
         "alpha_per_s": "gain α", "beta_per_s": "gain β", "T_s": "time constant T", "q0_pkts": "target queue q0",
         "a_pps2": "additive increase a", "b_per_s": "gain b", "epsilon_per_s": "rate ε", "gamma": "factor γ",
         "rtt_scale": "RTT scale factor", "red_p_max": "RED p_max", "red_min_th_pkts": "RED min_th",
         "red_max_th_pkts": "RED max_th"}


def _unit(name):
    if name in _UNITS:
        return _UNITS[name]
    for suf, u in (("_per_s", "1/s"), ("_pps2", "packets/s^2"), ("_pps", "packets/s"), ("_pkts", "packets"),
                   ("_s", "s")):
        if name.endswith(suf):
            return u
    return "-"


def stability_map(model="aecp", x_name="alpha_per_s", x_values=(0.5, 1, 2, 3, 4), y_name="rtt_s",
                  y_values=(0.05, 0.2, 0.4, 0.6, 0.8, 1.0), *, n_flows=4, rtt_s=0.1, capacity_pps=1000.0,
                  simulate_points=(), sim_t_end_s=60.0, n_nodes=None, progress=False, past="silent",
                  load_rtt="current", **params):
    """Margins and rightmost roots of ``model`` on an ``x_name`` x ``y_name`` grid.

    Parameters
    ----------
    model : str
        Registry name (a model :func:`analyze` supports).
    x_name, y_name : str
        A model parameter field (e.g. ``"alpha_per_s"``) or ``"rtt_s"``,
        ``"capacity_pps"``, ``"n_flows"``.
    x_values, y_values : sequences of float
        Grid values in the axis' unit (seconds for ``rtt_s``, packets/s for ``capacity_pps``).
    n_flows, rtt_s, capacity_pps : int, float, float
        Defaults for what is not on an axis: flows, RTT (s), capacity (packets/s).
    simulate_points : sequence of (x, y)
        Points at which the nonlinear model is simulated (``sim_t_end_s``
        seconds on a dumbbell) and the decay judged from the trajectory.
    sim_t_end_s : float
        Length of each simulation (s).
    n_nodes : int, optional
        Collocation nodes of the root finder (:func:`characteristic_roots`).
    progress : bool
        Show a progress bar (tqdm, on stderr) over the grid points and the simulated samples.
    past : {"silent", "steady"}
        The past before ``t = 0`` of the simulated points (:func:`ecocc.simulate`'s ``past``): ``"silent"``
        (default) no traffic before the flows start, ``"steady"`` the flows were sending at their initial rates
        before it.  The linearization is about the rest point and has no past.
    load_rtt : {"current", "sent"}
        How the simulated points read a delayed Reno-type rate ``W/(tau + Q)`` (:func:`ecocc.simulate`'s
        ``load_rtt``): ``"current"`` (default) with the current queueing delay, ``"sent"`` with the one at the
        sending time.
    **params : other model parameters.

    Returns
    -------
    xarray.Dataset
        Variables on (y, x): ``stable``, ``phase_margin_deg``,
        ``delay_margin_s``, ``critical_delay_s``, ``crossover_rad_s``,
        ``rightmost_real_per_s``, ``consistent`` (root and frequency verdicts
        agree), ``roots_certified``; on ``sample``:
        ``sample_x``, ``sample_y``, ``sim_decays``, ``sim_growth_per_s``,
        ``sim_regime``, ``predicted_stable``.

    Raises
    ------
    InputError
        For ``x_name == y_name``, or any point :func:`analyze` refuses.
    """
    import xarray as xr
    if x_name == y_name:
        raise InputError("y_name", y_name, f"a name different from x_name = {x_name!r}")
    from ..system import check_load_rtt, check_past
    past, load_rtt = check_past(past), check_load_rtt(load_rtt)
    xs = np.asarray(x_values, float); ys = np.asarray(y_values, float)
    shape = (ys.size, xs.size)
    out = {k: np.full(shape, np.nan) for k in ("phase_margin_deg", "delay_margin_s", "critical_delay_s",
                                                "crossover_rad_s", "rightmost_real_per_s")}
    stable = np.zeros(shape, bool); cons = np.zeros(shape, bool); cert = np.zeros(shape, bool)

    def point(xv, yv):
        kw = dict(n_flows=n_flows, rtt_s=rtt_s, capacity_pps=capacity_pps, **params)
        kw[x_name] = xv; kw[y_name] = yv
        if "n_flows" in (x_name, y_name):
            kw["n_flows"] = int(round(kw["n_flows"]))
        return kw

    sp = list(simulate_points)
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=xs.size * ys.size + len(sp), unit="point", desc=f"{model}: stability map", leave=False)
    for i, yv in enumerate(ys):
        for j, xv in enumerate(xs):
            a = analyze(model, n_nodes=n_nodes, **point(xv, yv))
            if bar is not None:
                bar.update(1)
            m = a.margins
            out["phase_margin_deg"][i, j] = m.phase_margin_deg
            out["delay_margin_s"][i, j] = m.delay_margin_s
            out["critical_delay_s"][i, j] = m.critical_delay_s
            out["crossover_rad_s"][i, j] = m.crossover_rad_s
            out["rightmost_real_per_s"][i, j] = a.roots.rightmost_per_s.real
            stable[i, j] = m.stable; cons[i, j] = a.consistent; cert[i, j] = a.roots.certified
    dims = ("y", "x")
    ds = xr.Dataset({k: (dims, v) for k, v in out.items()}, coords={"x": xs, "y": ys})
    ds["stable"] = (dims, stable); ds["consistent"] = (dims, cons)
    ds["roots_certified"] = (dims, cert, {"long_name": "rightmost root certified by the argument-principle count"})
    units = {"phase_margin_deg": "deg", "delay_margin_s": "s", "critical_delay_s": "s", "crossover_rad_s": "rad/s",
             "rightmost_real_per_s": "1/s"}
    for k, u in units.items():
        ds[k].attrs["units"] = u
    ds["x"].attrs.update(long_name=x_name, units=_unit(x_name))
    ds["y"].attrs.update(long_name=y_name, units=_unit(y_name))
    sx, sy, dec, gr, pred, reg = [], [], [], [], [], []
    for (xv, yv) in sp:
        kw = point(xv, yv)
        a = analyze(model, n_nodes=n_nodes, **kw)
        nf, rtt, cap = kw.pop("n_flows"), kw.pop("rtt_s"), kw.pop("capacity_pps")
        d = simulate_decay(model, n_flows=nf, rtt_s=rtt, capacity_pps=cap, t_end_s=sim_t_end_s, past=past,
                           load_rtt=load_rtt, **kw)
        sx.append(xv); sy.append(yv); dec.append(d.decays); gr.append(d.growth_per_s); pred.append(a.margins.stable)
        reg.append(d.regime)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    ds["sample_x"] = ("sample", np.asarray(sx, float)); ds["sample_y"] = ("sample", np.asarray(sy, float))
    ds["sim_decays"] = ("sample", np.asarray(dec, bool)); ds["sim_growth_per_s"] = ("sample", np.asarray(gr, float))
    ds["predicted_stable"] = ("sample", np.asarray(pred, bool))
    ds["sim_regime"] = ("sample", np.asarray(reg, dtype="U24"), {
        "long_name": "settled / decaying_not_settled / growing_or_limit_cycle / failed (see simulate_decay)"})
    ds.attrs.update(model=str(model), x_name=x_name, y_name=y_name, n_flows=int(n_flows), capacity_pps=float(capacity_pps),
                    default_rtt_s=float(rtt_s), scenario=f"{model}: {n_flows} synchronous flows, one bottleneck of "
                    f"{capacity_pps:g} packets/s", params=str(params), sim_past=past, sim_load_rtt=load_rtt)
    return ds


def plot_stability_map(ds, ax=None, *, legend="inside", title=None, boundary_kw=None, marker_kw=None, colorbar=True,
                       **mesh_kw):
    """Plot a :func:`stability_map` dataset: rightmost root real part, the
    stability boundary and simulated samples.

    Parameters
    ----------
    ds : xarray.Dataset
        From :func:`stability_map`.
    ax : matplotlib Axes, optional
        Where to draw; a new figure (7 x 5 inches, constrained layout) when absent.
    legend : {"inside", "outside", "below", "auto", None}
        Where the legend goes (``"below"`` needs a figure of its own; ``"auto"``: below in a figure of
        its own, else inside).
    title : str or False, optional
        Axes title (default: the scenario and the setting).  ``False``: none.
    boundary_kw : dict, optional
        Keywords for the stability boundary (``Axes.contour`` of Re = 0).
    marker_kw : dict, optional
        Keywords applied to every point marker (simulated samples, uncertified roots), e.g. ``ms=6``.
    colorbar : bool
        Draw the colour bar.
    **mesh_kw
        Passed to ``Axes.pcolormesh`` (default ``cmap="RdBu_r"``, symmetric about 0).

    Returns
    -------
    ecocc.plotting.MapPlot
        ``figure``, ``axes``, ``mesh``, ``colorbar``, ``contours`` (``"boundary"``), ``lines``
        (``"critical_delay"``, samples by regime, ``"not_certified"``), ``legend`` and ``savefig``.
    """
    import textwrap

    import matplotlib
    matplotlib.use("Agg", force=False)
    from matplotlib.lines import Line2D

    from ..plotting import MapPlot, _map_legend, _resolve_axes
    fig, (ax,), created = _resolve_axes(ax, 1, None, (7, 5), "plot_stability_map")
    res = MapPlot(figure=fig, axes=ax)
    x, y = ds["x"].values, ds["y"].values
    z = ds["rightmost_real_per_s"].values
    lim = np.nanmax(np.abs(z)) if np.isfinite(z).any() else 1.0
    res.mesh = ax.pcolormesh(x, y, z, **{"shading": "nearest", "cmap": "RdBu_r", "vmin": -lim, "vmax": lim,
                                         **mesh_kw})
    if colorbar:
        res.colorbar = fig.colorbar(res.mesh, ax=ax, label="Re(rightmost root) (1/s)")
    handles = []
    if x.size > 1 and y.size > 1 and np.nanmin(z) < 0 < np.nanmax(z):
        bkw = {"colors": "k", "linewidths": 2, **(boundary_kw or {})}
        res.contours["boundary"] = ax.contour(x, y, z, levels=[0.0], **bkw)
        handles.append(Line2D([], [], color=np.atleast_1d(bkw["colors"])[0], lw=np.atleast_1d(bkw["linewidths"])[0],
                              label="stability boundary (Re = 0)"))
    if ds.attrs.get("y_name") == "rtt_s" and ds.attrs.get("model") != "reno":  # reno's gains depend on the RTT
        res.lines["critical_delay"] = ax.plot(x, ds["critical_delay_s"].isel(y=0).values, "m--", lw=1.5)
        handles.append(Line2D([], [], color="m", ls="--", label="critical delay (exact)"))
    if ds.sizes.get("sample", 0):
        if "sim_regime" in ds:
            reg = ds["sim_regime"].values.astype(str)
        else:
            reg = np.where(ds["sim_decays"].values, "decaying_not_settled", "growing_or_limit_cycle")
        styles = {"settled": ("simulation settles", dict(marker="o", mfc="none", mec="g", mew=2)),
                  "decaying_not_settled": ("simulation decays, not settled", dict(marker="v", mfc="none", mec="c",
                                                                                 mew=2)),
                  "growing_or_limit_cycle": ("simulation grows or cycles", dict(marker="x", color="r", mew=2)),
                  "failed": ("simulation failed", dict(marker="s", mfc="none", mec="0.4", mew=2))}
        for key, (label, st) in styles.items():
            sel = reg == key
            if sel.any():
                st = {"ms": 9, **st, **(marker_kw or {})}
                res.lines[key] = ax.plot(ds["sample_x"].values[sel], ds["sample_y"].values[sel], ls="", **st)
                handles.append(Line2D([], [], ls="", **st, label=f"{label} ({int(sel.sum())})"))
    if "roots_certified" in ds and not ds["roots_certified"].values.all():
        Y, X = np.meshgrid(y, x, indexing="ij")
        bad = ~ds["roots_certified"].values.astype(bool)
        st = {"marker": "s", "mfc": "none", "mec": "0.3", "ms": 10, **(marker_kw or {})}
        res.lines["not_certified"] = ax.plot(X[bad], Y[bad], ls="", **st)
        handles.append(Line2D([], [], ls="", **st, label=f"roots not certified ({int(bad.sum())})"))
    for axis, setter in (("x", ax.set_xlabel), ("y", ax.set_ylabel)):
        nm = ds[axis].attrs.get("long_name", axis)
        setter(f"{WORDS.get(nm, nm)} ({ds[axis].attrs.get('units', '-')})")
    if title is not False:
        if title is None:
            head = f"Linear stability (exact delay), {ds.attrs.get('scenario', '')}"
            if ds.attrs.get("setting"):
                head += f"\n{ds.attrs['setting']}"
            title = "\n".join(textwrap.fill(t, 95) for t in head.split("\n"))
        ax.set_title(title, fontsize=8)
    res.legend = _map_legend(res, handles, legend, created)
    if y.max() > y.min():
        ax.set_ylim(y.min(), y.max())
    else:  # one value on the y axis: a band of +-5 % around it (not an empty range, which matplotlib warns about)
        pad = 0.05 * abs(float(y[0])) or 0.5
        ax.set_ylim(float(y[0]) - pad, float(y[0]) + pad)
    return res
