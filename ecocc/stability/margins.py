"""Exact-delay margins of ``L(s) exp(-s tau)`` and the delay-crossing analysis.

Conventions: negative feedback, characteristic equation
``D(s) + N(s) exp(-s tau) = 0`` with ``L = N/D``; frequencies in rad/s,
delays in s, phases in degrees.

Gain crossovers are the positive real roots of the polynomial
``|N(jw)|^2 - |D(jw)|^2`` (exact, no grid).  Roots of the characteristic
equation cross the imaginary axis only at a gain crossover ``w_i`` and only
at the delays ``tau_ik = (arg L(j w_i) + pi mod 2 pi + 2 pi k) / w_i``
(D-subdivision).  Counting the right-half-plane roots at ``tau = 0`` (roots
of ``D + N``) and adding ``2 sign(Re ds/dtau)`` at each crossing gives the
number of unstable roots for every delay; this is what decides stability
and the critical delay, so a double integrator (phase -180 deg at low
frequency) needs no special Nyquist bookkeeping.  Phase crossovers (for the
gain margin) are found on the analytically unwrapped phase.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import brentq

from ..errors import InputError, check_finite


@dataclass(frozen=True)
class MarginResult:
    """Margins of ``L(s) exp(-s delay_s)``.

    Attributes
    ----------
    delay_s : float
        Loop delay used (s).
    phase_margin_deg : float
        ``180 + arg(L e^{-jw tau})`` at the gain crossover, wrapped to
        (-180, 180] deg; the smallest over all crossovers.  NaN if none.
    crossover_rad_s : float
        Gain crossover frequency of that phase margin (rad/s).
    crossovers_rad_s : tuple of float
        All gain crossovers (rad/s).
    gain_margin : float
        Smallest factor k > 1 with ``k L(jw) e^{-jw tau} = -1`` (inf if none).
    gain_margin_lower : float
        Largest factor k < 1 with the same property (0 if none): lowering the
        gain below it destabilises a conditionally stable loop.
    phase_crossover_rad_s : float
        Frequency of ``gain_margin`` (rad/s).
    delay_margin_s : float
        Extra delay beyond ``delay_s`` before the loop loses stability
        (``critical - delay`` once unstable: negative), inf if never.
    critical_delay_s : float
        Smallest total delay at which the loop (stable at delay 0) loses
        stability; 0 if unstable without delay; inf if stable for all delays.
    stable : bool
        Verdict at ``delay_s`` from the crossing count.
    n_unstable : int
        Number of characteristic roots with positive real part at ``delay_s``.
    stability_intervals_s : tuple of (float, float)
        Delay intervals (s) on which the loop is stable (up to ``max_delay_s``).
    phase_margin_unwrapped_deg : float
        ``180 + phase`` with the phase of ``L(jw) e^{-jw tau}`` unwrapped
        continuously from low frequency, at the crossover of
        ``phase_margin_deg``: equal to it unless the delay has turned the
        phase past -180 deg more than once (then the wrapped value can look
        healthy on an unstable loop).
    status : str
        ``"ok"``, ``"unstable"`` or ``"marginal"`` (roots on the imaginary
        axis at ``delay_s``, none to the right).
    messages : tuple of str
    """

    delay_s: float
    phase_margin_deg: float
    crossover_rad_s: float
    crossovers_rad_s: tuple
    gain_margin: float
    gain_margin_lower: float
    phase_crossover_rad_s: float
    delay_margin_s: float
    critical_delay_s: float
    stable: bool
    n_unstable: int
    stability_intervals_s: tuple
    status: str = "ok"
    messages: tuple = ()
    phase_margin_unwrapped_deg: float = math.nan

    def as_dict(self) -> dict:
        """Return the result as plain data (tuples as lists).

        Returns
        -------
        dict
            Every field by name, units as in the attribute names (seconds, rad/s, degrees).
        """
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


def _as_loop(loop, delay_s=None):
    if hasattr(loop, "num") and hasattr(loop, "den"):
        num, den = np.atleast_1d(np.asarray(loop.num, float)), np.atleast_1d(np.asarray(loop.den, float))
        d = getattr(loop, "delay_s", 0.0) if delay_s is None else delay_s
        hidden = np.asarray(getattr(loop, "hidden_poles", np.array([])), complex)
    else:
        num, den = (np.atleast_1d(np.asarray(v, float)) for v in loop)
        d = 0.0 if delay_s is None else delay_s
        hidden = np.array([], complex)
    d = check_finite("delay_s", d, nonneg=True)
    num = np.trim_zeros(num, "f"); den = np.trim_zeros(den, "f")
    if num.size == 0 or den.size == 0 or num.size > den.size:
        raise InputError("loop", (num.tolist(), den.tolist()), "a proper rational L(s) = num/den (deg num <= deg den)")
    return num, den, d, hidden


def frequency_response(loop, omega_rad_s, delay_s=None) -> np.ndarray:
    """Evaluate ``L(jw) exp(-jw tau)`` at the given frequencies, exactly.

    Parameters
    ----------
    loop : RationalLoop or (num, den)
        ``L(s)`` as polynomial coefficients in ``s`` (rad/s), highest first.
    omega_rad_s : array_like
        Angular frequencies, rad/s.
    delay_s : float, optional
        Loop delay (s, >= 0); default ``loop.delay_s`` (0 for a ``(num, den)`` pair).

    Returns
    -------
    numpy.ndarray
        Complex values (dimensionless), shape of ``omega_rad_s``.

    Raises
    ------
    InputError
        For a negative or non-finite delay, or an improper or empty ``L``.
    """
    num, den, d, _ = _as_loop(loop, delay_s)
    w = np.asarray(omega_rad_s, float)
    s = 1j * w
    return np.polyval(num, s) / np.polyval(den, s) * np.exp(-s * d)


def unwrapped_phase_rad(num, den, w, delay_s):
    """Return the continuous phase of ``L(jw) e^{-jw tau}``, from root angles.

    Parameters
    ----------
    num, den : array_like
        Coefficients of ``L`` in ``s`` (rad/s), highest power first.
    w : array_like
        Angular frequencies, rad/s (> 0, increasing, for the unwrapping to be continuous).
    delay_s : float
        Loop delay, seconds.

    Returns
    -------
    numpy.ndarray
        Phase in radians, continuous in ``w`` (not wrapped to (-pi, pi]).
    """
    w = np.asarray(w, float)
    z, p = np.roots(num), np.roots(den)
    ph = np.full(w.shape, math.atan2(0.0, 1.0) if num[0] / den[0] > 0 else math.pi)
    for r in z:
        ph = ph + _root_angle(w, r)
    for r in p:
        ph = ph - _root_angle(w, r)
    return ph - w * delay_s


def _root_angle(w, r):
    # angle of (jw - r), continuous in w > 0 unless r is on the positive imaginary axis
    if abs(r) < 1e-12:
        return np.full(w.shape, math.pi / 2)
    return np.unwrap(np.angle(1j * w - r))


def gain_crossovers(num, den) -> np.ndarray:
    """Return the positive ``w`` with ``|L(jw)| = 1``: roots of ``|N(jw)|^2 - |D(jw)|^2``.

    Parameters
    ----------
    num, den : array_like
        Coefficients of ``L = N/D`` in ``s`` (rad/s), highest power first.

    Returns
    -------
    numpy.ndarray
        Gain crossover frequencies, rad/s, ascending (polished by Brent's method on ``|L| - 1``);
        empty if there is none (or ``|L| = 1`` identically).
    """
    def mag2(c):
        # |P(jw)|^2 = P(jw) P(-jw) as a real polynomial in w
        pj = np.array([c[k] * (1j) ** (len(c) - 1 - k) for k in range(len(c))])
        pmj = np.array([c[k] * (-1j) ** (len(c) - 1 - k) for k in range(len(c))])
        return np.real(np.polymul(pj, pmj))
    poly = np.polysub(mag2(num), mag2(den))
    poly = np.trim_zeros(poly, "f")
    if poly.size <= 1:
        return np.array([])
    r = np.roots(poly)
    w = np.sort(np.unique(np.round(r[(np.abs(r.imag) < 1e-7 * np.maximum(1, np.abs(r))) & (r.real > 0)].real, 12)))
    # polish on |L| - 1
    out = []
    for wi in w:
        f = lambda x: abs(np.polyval(num, 1j * x) / np.polyval(den, 1j * x)) - 1.0  # noqa: E731
        lo, hi = wi * (1 - 1e-6), wi * (1 + 1e-6)
        out.append(brentq(f, lo, hi, xtol=1e-15) if f(lo) * f(hi) < 0 else wi)
    return np.array(out)


def _ds_dtau_sign(num, den, w, tau):
    s = 1j * w
    N = np.polyval(num, s)
    Np, Dp = np.polyval(np.polyder(num), s), np.polyval(np.polyder(den), s)
    e = np.exp(-s * tau)
    dsdt = s * N * e / (Dp + Np * e - tau * N * e)
    return int(np.sign(dsdt.real))


def delay_crossings(num, den, max_delay_s):
    """List where roots cross the imaginary axis as the delay grows from 0 to ``max_delay_s``.

    Parameters
    ----------
    num, den : array_like
        Coefficients of ``L = N/D`` in ``s`` (rad/s), highest power first.
    max_delay_s : float
        Largest delay considered, seconds.

    Returns
    -------
    list of tuple
        ``(delay_s, omega_rad_s, direction)`` sorted by delay: the delay (s), the crossing frequency
        (rad/s) and +1 into the right half plane, -1 out of it, 0 tangent (a complex pair: 2 roots).
    """
    out = []
    for w in gain_crossovers(num, den):
        L = np.polyval(num, 1j * w) / np.polyval(den, 1j * w)
        ang = (np.angle(L) + math.pi) % (2 * math.pi)
        if ang > 2 * math.pi - 1e-9:  # L(jw) = -1 to round-off: a root on the axis at delay 0, not at 2 pi / w
            ang = 0.0
        base = ang / w
        k = 0
        while True:
            t = base + 2 * math.pi * k / w
            if t > max_delay_s:
                break
            out.append((t, w, _ds_dtau_sign(num, den, w, t)))
            k += 1
    return sorted(out)


def margins(loop, delay_s=None, *, max_delay_s=None, messages=()) -> MarginResult:
    """Gain, phase and delay margins of ``L(s) exp(-s delay_s)`` (exact delay).

    Parameters
    ----------
    loop : RationalLoop or (num, den)
        ``L(s)`` as polynomial coefficients in ``s`` (rad/s), highest first.
    delay_s : float, optional
        Loop delay (s); default ``loop.delay_s``.
    max_delay_s : float, optional
        Largest delay considered for the stability intervals (default
        ``max(10 * delay_s, 100 / w_c, 1)``).
    messages : sequence of str, optional
        Messages to carry into the result ahead of the ones this analysis adds.

    Returns
    -------
    MarginResult
        Phase margin (degrees), gain margins, crossover frequencies (rad/s), delay margin and critical
        delay (s), the verdict at ``delay_s`` from the crossing count, and the stable delay intervals.

    Raises
    ------
    InputError
        For a negative or non-finite delay, or an improper or empty ``L``.
    """
    num, den, tau, hidden = _as_loop(loop, delay_s)
    msgs = list(messages)
    wg = gain_crossovers(num, den)
    if max_delay_s is None:
        max_delay_s = max(10 * tau, (100.0 / wg.min()) if wg.size else 1.0, 1.0)
    # --- delay-free closed loop and hidden modes ---------------------------
    cl = np.polyadd(den, num)
    r0 = np.roots(cl) if cl.size > 1 else np.array([], complex)
    axis_tol = 1e-9 * np.maximum(1.0, np.abs(r0))
    # roots on the imaginary axis at delay 0 (a marginal delay-free loop) are not in the right half plane:
    # where they go as the delay grows is decided by the crossing at delay 0 below (counting them here as
    # well counted every such pair twice)
    n0 = int(np.sum(r0.real > axis_tol))
    on_axis = r0[np.abs(r0.real) <= axis_tol]
    at_origin = int(np.sum(np.abs(on_axis) <= 1e-9))
    if on_axis.size:
        msgs.append(f"{on_axis.size} root(s) of the delay-free closed loop on the imaginary axis "
                    f"({', '.join(f'{z.imag:.6g}j' for z in on_axis)}): marginal without delay")
    if at_origin:
        msgs.append(f"{at_origin} closed-loop root(s) at s = 0 for every delay (D(0) + N(0) = 0): never "
                    "asymptotically stable")
    hidden_unstable = int(np.sum(np.asarray(hidden).real > 0))
    if hidden_unstable:
        msgs.append(f"{hidden_unstable} unstable hidden mode(s) not in L(s)")
    cross = delay_crossings(num, den, max(max_delay_s, tau) * 1.0000001)
    # unstable-root count as a function of delay
    count, intervals, start = n0, [], 0.0
    stable_now = n0 == 0
    crit = 0.0 if n0 else math.inf
    n_at_tau = n0
    zero_tol = 1e-12 * max(1.0, tau)
    marginal_now = False
    for (t, w, dirn) in cross:
        prev = count
        count += 2 * dirn
        if prev == 0 and count > 0:
            if t > start + zero_tol:
                intervals.append((start, t))
            if crit == math.inf:
                crit = t
        if prev > 0 and count == 0:
            start = t
        if abs(t - tau) <= zero_tol:
            marginal_now = True          # a root pair on the axis at exactly this delay
        elif t < tau:
            n_at_tau = count
    if count == 0:
        intervals.append((start, math.inf))
    if n0 and not cross:
        crit = 0.0
    n_at_tau = max(n_at_tau, 0) + hidden_unstable
    stable_now = n_at_tau == 0 and not marginal_now and not at_origin
    if marginal_now and n_at_tau == 0:
        msgs.append(f"marginal at delay {tau:g} s: a root pair on the imaginary axis")
    if at_origin:
        crit = 0.0
        intervals = []
    if hidden_unstable:
        crit = 0.0
        intervals = []
    # --- phase margin and crossovers at this delay ------------------------------
    pms = []
    for w in wg:
        Lj = np.polyval(num, 1j * w) / np.polyval(den, 1j * w) * np.exp(-1j * w * tau)
        pm = math.degrees(np.angle(Lj)) + 180.0
        pm = (pm + 180.0) % 360.0 - 180.0
        if pm == -180.0:
            pm = 180.0
        pms.append(pm)
    if wg.size:
        i = int(np.argmin(pms))
        pm, wc = float(pms[i]), float(wg[i])
        pm_unw = 180.0 + math.degrees(float(unwrapped_phase_rad(num, den, np.array([wc]), tau)[0]))
        if abs(pm_unw - pm) > 1e-6:
            msgs.append(f"the phase margin wraps: unwrapped, the phase at {wc:.4g} rad/s is "
                        f"{pm_unw - 180.0:.1f} deg ({pm_unw:.1f} deg from -180), wrapped it reads {pm:.3g} deg")
    else:
        pm, wc, pm_unw = math.nan, math.nan, math.nan
        msgs.append("no gain crossover: |L(jw)| never equals 1")
    # delay margin: next destabilising crossing beyond tau
    if stable_now:
        nxt = [t for (t, w, d) in cross if t > tau and d > 0]
        later = math.inf
        cnt = n_at_tau
        for (t, w, d) in cross:
            if t <= tau:
                continue
            cnt += 2 * d
            if cnt > 0:
                later = t
                break
        dm = later - tau if nxt else math.inf
        if later == math.inf and wg.size and max_delay_s < math.inf:
            dm = math.inf
    else:
        dm = crit - tau if np.isfinite(crit) else -math.inf
        if n_at_tau:
            msgs.append(f"unstable at delay {tau:g} s ({n_at_tau} root(s) in the right half plane)")
    # --- gain margins on the unwrapped phase -------------------------------------
    gm, gml, wpc = math.inf, 0.0, math.nan
    wref = wc if np.isfinite(wc) else 1.0
    w_hi = max(1e3 * wref, 200 * math.pi / tau if tau > 0 else 0.0)
    w_hi = min(w_hi, 1e5 * wref)
    grid = np.concatenate([np.geomspace(1e-5 * wref, w_hi, 40000)])
    ph = unwrapped_phase_rad(num, den, grid, tau)
    lev = np.floor((ph + math.pi) / (2 * math.pi))
    idx = np.nonzero(np.diff(lev) != 0)[0]
    for j in idx:
        level = -math.pi + 2 * math.pi * max(lev[j], lev[j + 1])
        f = lambda x: float(unwrapped_phase_rad(num, den, np.array([x]), tau)[0] - level)  # noqa: E731
        try:
            w = brentq(f, grid[j], grid[j + 1], xtol=1e-14 * grid[j + 1])
        except ValueError:
            w = 0.5 * (grid[j] + grid[j + 1])
        mag = abs(np.polyval(num, 1j * w) / np.polyval(den, 1j * w))
        k = 1.0 / mag
        if k > 1 and k < gm:
            gm, wpc = k, w
        elif k < 1 and k > gml:
            gml = k
    return MarginResult(delay_s=tau, phase_margin_deg=pm, crossover_rad_s=wc, crossovers_rad_s=tuple(map(float, wg)),
                        gain_margin=float(gm), gain_margin_lower=float(gml), phase_crossover_rad_s=float(wpc),
                        delay_margin_s=float(dm), critical_delay_s=float(crit), stable=bool(stable_now),
                        n_unstable=int(n_at_tau), stability_intervals_s=tuple(intervals),
                        phase_margin_unwrapped_deg=float(pm_unw),
                        status="ok" if stable_now else ("marginal" if (marginal_now or at_origin) and n_at_tau == 0
                                                        else "unstable"), messages=tuple(msgs))


@dataclass(frozen=True)
class PadeCheck:
    """Margins of ``L(s) pade_n(e^{-s tau})`` for several orders.

    Attributes
    ----------
    orders : tuple of int
    phase_margin_deg, gain_margin, crossover_rad_s : tuple of float
        From ``control.stability_margins`` on the Padé loop.
    exact : MarginResult
    phase_margin_error_deg : tuple of float
        ``|PM_pade - PM_exact|`` per order.
    """

    orders: tuple
    phase_margin_deg: tuple
    gain_margin: tuple
    crossover_rad_s: tuple
    exact: MarginResult
    phase_margin_error_deg: tuple
    messages: tuple = field(default_factory=tuple)


def pade_check(loop, delay_s=None, orders=(1, 2, 3, 4, 6, 8)) -> PadeCheck:
    """Cross-check the exact margins with Padé approximants (python-control).

    Parameters
    ----------
    loop : RationalLoop or (num, den)
        ``L(s)`` as polynomial coefficients in ``s`` (rad/s), highest first.
    delay_s : float, optional
        Loop delay (s); default ``loop.delay_s``.
    orders : sequence of int, optional
        Padé orders to try.

    Returns
    -------
    PadeCheck
        Per order the phase margin (degrees), gain margin and crossover (rad/s) of
        ``control.stability_margins`` on the Padé loop, its phase-margin error against the exact one,
        and the exact :class:`MarginResult`.

    Raises
    ------
    InputError
        For a bad delay or an improper ``L``.
    """
    import control
    num, den, tau, _ = _as_loop(loop, delay_s)
    exact = margins((num, den), tau)
    L0 = control.tf(num, den)
    pms, gms, wcs, errs = [], [], [], []
    for n in orders:
        pn, pd = control.pade(tau, n)
        Lp = L0 * control.tf(pn, pd)
        gm, pm, _sm, _wpc, wgc, _wms = control.stability_margins(Lp)
        pms.append(float(pm)); gms.append(float(gm)); wcs.append(float(wgc))
        errs.append(abs(float(pm) - exact.phase_margin_deg))
    return PadeCheck(tuple(orders), tuple(pms), tuple(gms), tuple(wcs), exact, tuple(errs))
