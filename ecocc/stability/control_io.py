"""Hand a loop to python-control, and Bode / Nyquist plots with the delay exact."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .margins import _as_loop, margins, unwrapped_phase_rad


@dataclass(frozen=True)
class ControlLoop:
    """A loop ``L(s) exp(-s delay_s)`` as python-control objects.

    Attributes
    ----------
    rational : control.TransferFunction
        The delay-free rational part ``L(s)`` (exact).
    delay_s : float
        The loop delay (s), kept apart: python-control has no exact delay.
    pade : control.TransferFunction or None
        ``L(s) pade_n(s)``: the delay replaced by the order-``pade_order``
        Padé approximant (``control.pade``), or None if not asked for.
    pade_order : int or None
    note : str
        What is exact and what is approximated.
    """

    rational: object
    delay_s: float
    pade: object = None
    pade_order: int | None = None
    note: str = ""


def to_control(loop, delay_s=None, *, pade_order=None) -> ControlLoop:
    """``L(s)`` (and optionally ``L(s)`` times a Padé delay) as python-control transfer functions.

    Parameters
    ----------
    loop : RationalLoop, LoopAnalysis or (num, den)
        Coefficients in ``s`` (rad/s), highest power first.
    delay_s : float, optional
        Loop delay (s); default the loop's own.
    pade_order : int, optional
        If given, also return ``L(s) * pade(delay, pade_order)``.  Padé
        approximants are exact only at ``s = 0``: the phase error grows
        like ``(w tau)^(2n+1)``; use :func:`ecocc.stability.margins` for
        margins with the delay exact.

    Returns
    -------
    ControlLoop
        The exact rational part, the delay in seconds kept apart, and the Padé product if asked for.

    Raises
    ------
    InputError
        For a ``pade_order`` that is not an integer from 1 to 20, a bad delay or an improper ``L``.
    """
    import control
    if hasattr(loop, "rational") and not hasattr(loop, "num"):
        loop = loop.rational
    num, den, tau, _ = _as_loop(loop, delay_s)
    L = control.tf(num, den)
    pade, note = None, (f"rational: L(s) exact; the delay exp(-s {tau:g}) is kept apart as delay_s "
                        "(python-control has no exact delay)")
    if pade_order is not None:
        if int(pade_order) != pade_order or not 1 <= pade_order <= 20:
            raise InputError("pade_order", pade_order, "an integer from 1 to 20")
        pn, pd = control.pade(tau, int(pade_order))
        pade = L * control.tf(pn, pd)
        note += f"; pade: the delay replaced by its order-{int(pade_order)} Padé approximant"
    return ControlLoop(L, float(tau), pade, None if pade_order is None else int(pade_order), note)


def _frequencies(num, den, tau, omega_rad_s):
    if omega_rad_s is not None:
        w = np.asarray(omega_rad_s, float)
        if w.ndim != 1 or w.size < 2 or np.any(~np.isfinite(w)) or np.any(w <= 0):
            raise InputError("omega_rad_s", omega_rad_s, "at least two finite frequencies > 0 (rad/s)")
        return np.sort(w)
    m = margins((num, den), tau)
    wref = m.crossover_rad_s if np.isfinite(m.crossover_rad_s) else 1.0
    hi = 100 * wref
    if tau > 0:
        hi = max(hi, min(1e3 * wref, 20 * math.pi / tau))
    return np.geomspace(wref / 100, hi, 4000)


def bode_plot(loop, delay_s=None, *, omega_rad_s=None, ax=None, show_margins=True, title=None, **line_kw):
    """Bode plot of ``L(jw) exp(-jw tau)`` with the delay exact (phase unwrapped analytically).

    Parameters
    ----------
    loop : RationalLoop, LoopAnalysis or (num, den)
        The loop ``L(s)``: coefficients in ``s`` (rad/s), highest power first.
    delay_s : float, optional
        Loop delay (s); default the loop's own.
    omega_rad_s : array, optional
        Frequencies (rad/s); default two decades around the gain crossover
        (further up with a delay, to show its phase).
    ax : pair of matplotlib Axes, optional
        (magnitude axes, phase axes); default a new figure with two rows.
    show_margins : bool
        Mark the gain crossover and the phase margin (degrees).
    title : str, optional
        Title; default one naming the delay and the loop.
    **line_kw
        Passed to ``Axes.semilogx`` for both curves (``color``, ``lw``, ``label`` ...).

    Returns
    -------
    dict
        ``figure``, ``axes`` (mag, phase), ``magnitude`` (dB), ``phase`` (degrees) (Line2D)
        and ``markers`` (list of artists).

    Raises
    ------
    InputError
        For bad frequencies or a malformed loop.
    """
    import matplotlib.pyplot as plt
    if hasattr(loop, "rational") and not hasattr(loop, "num"):
        loop = loop.rational
    num, den, tau, _ = _as_loop(loop, delay_s)
    w = _frequencies(num, den, tau, omega_rad_s)
    if ax is None:
        fig, (am, ap) = plt.subplots(2, 1, sharex=True, figsize=(7, 6), layout="constrained")
    else:
        am, ap = ax
        fig = am.figure
    mag_db = 20 * np.log10(np.abs(np.polyval(num, 1j * w) / np.polyval(den, 1j * w)))
    ph_deg = np.degrees(unwrapped_phase_rad(num, den, w, tau))
    (lm,) = am.semilogx(w, mag_db, **line_kw)
    kw2 = {k: v for k, v in line_kw.items() if k != "label"}
    (lp,) = ap.semilogx(w, ph_deg, **kw2)
    markers = []
    am.set_ylabel("Magnitude of L(jω) (dB)")
    ap.set_ylabel("Phase of L(jω) e^(−jωτ) (degrees)")
    ap.set_xlabel("Angular frequency ω (rad/s)")
    markers.append(am.axhline(0.0, color="0.5", lw=0.8, ls=":"))
    markers.append(ap.axhline(-180.0, color="0.5", lw=0.8, ls=":"))
    if show_margins:
        m = margins((num, den), tau)
        if np.isfinite(m.crossover_rad_s):
            wc = m.crossover_rad_s
            phc = float(np.degrees(unwrapped_phase_rad(num, den, np.array([wc]), tau))[0])
            markers.append(am.axvline(wc, color="0.4", lw=0.8, ls="--"))
            markers.append(ap.axvline(wc, color="0.4", lw=0.8, ls="--",
                                      label=f"gain crossover {wc:.4g} rad/s, phase margin {m.phase_margin_deg:.3g}°"))
            markers.append(ap.plot([wc], [phc], "o", color=lp.get_color())[0])
            ap.legend(loc="lower left", fontsize=8)
    am.grid(True, which="both", alpha=0.3)
    ap.grid(True, which="both", alpha=0.3)
    if title is None:
        title = f"Bode plot, delay τ = {tau:g} s exact" + (f": {loop.label}" if getattr(loop, "label", "") else "")
    import textwrap
    am.set_title("\n".join(textwrap.wrap(title, 100)), fontsize=8)
    return {"figure": fig, "axes": (am, ap), "magnitude": lm, "phase": lp, "markers": markers}


def nyquist_plot(loop, delay_s=None, *, omega_rad_s=None, ax=None, max_magnitude=10.0, title=None, **line_kw):
    """Nyquist plot of ``L(jw) exp(-jw tau)`` (w > 0 solid, w < 0 its mirror dashed), delay exact.

    Frequencies where ``|L| > max_magnitude`` (near integrators) are left
    out; the title says from which frequency the curve starts.

    Parameters
    ----------
    loop : RationalLoop, LoopAnalysis or (num, den)
        The loop ``L(s)``: coefficients in ``s`` (rad/s), highest power first.
    delay_s : float, optional
        Loop delay (s); default the loop's own.
    omega_rad_s : array_like, optional
        Frequencies (rad/s, > 0, at least two); default 8000 points from four decades below the gain
        crossover up.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; default a new figure.
    max_magnitude : float, optional
        Points with ``|L(jw)|`` above this are left out (dimensionless).
    title : str, optional
        Title; default one naming the delay and where the curve starts.
    **line_kw
        Passed to ``Axes.plot`` for the curve.

    Returns
    -------
    dict
        ``figure``, ``axes``, ``positive``, ``negative`` (Line2D), ``critical_point``.

    Raises
    ------
    InputError
        For bad frequencies or a malformed loop.
    """
    import matplotlib.pyplot as plt
    if hasattr(loop, "rational") and not hasattr(loop, "num"):
        loop = loop.rational
    num, den, tau, _ = _as_loop(loop, delay_s)
    w = _frequencies(num, den, tau, omega_rad_s)
    if omega_rad_s is None:
        w = np.geomspace(w[0] / 100, w[-1], 8000)
    L = np.polyval(num, 1j * w) / np.polyval(den, 1j * w) * np.exp(-1j * w * tau)
    keep = np.abs(L) <= max_magnitude
    w, L = w[keep], L[keep]
    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 6), layout="constrained")
    else:
        fig = ax.figure
    (pos,) = ax.plot(L.real, L.imag, **{"label": "ω > 0", **line_kw})
    kw2 = {k: v for k, v in line_kw.items() if k not in ("label", "ls", "linestyle")}
    (neg,) = ax.plot(L.real, -L.imag, ls="--", **{"color": pos.get_color(), "label": "ω < 0 (mirror)", **kw2})
    (crit,) = ax.plot([-1], [0], "r+", ms=12, mew=2, label="critical point −1")
    ax.set_xlabel("Real part of L(jω) e^(−jωτ) (dimensionless)")
    ax.set_ylabel("Imaginary part of L(jω) e^(−jωτ) (dimensionless)")
    ax.set_aspect("equal", adjustable="datalim")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize=8)
    span = (f"ω from {w[0]:.3g} to {w[-1]:.3g} rad/s"
            + (f" (lower frequencies, where |L| > {max_magnitude:g}, left out)" if not keep.all() else ""))
    title = (f"Nyquist plot, delay τ = {tau:g} s exact" if title is None else title) + "; " + span
    import textwrap
    ax.set_title("\n".join(textwrap.wrap(title, 80)), fontsize=8)
    return {"figure": fig, "axes": ax, "positive": pos, "negative": neg, "critical_point": crit}
