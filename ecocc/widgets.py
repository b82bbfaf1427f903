"""Sliders for the notebooks that still work without a browser.

:func:`explore` calls a plotting function once directly with its default
arguments (so an executed notebook -- the test suite, nbconvert, GitHub's
viewer -- shows that output), then, when :mod:`ipywidgets` is installed,
adds sliders (``ipywidgets.interactive``) that re-run it in a live kernel.
Set the environment variable ``ECOCC_WIDGETS=off`` to skip the sliders.
"""
from __future__ import annotations

import inspect
import os

from .errors import InputError


def explore(fn, /, **ranges):
    """Call ``fn()`` with its defaults, then attach ``ipywidgets`` sliders.

    Parameters
    ----------
    fn : callable
        A function of keyword arguments, each with a default value; it should
        draw (``plt.show()``) or print what it wants shown.
    **ranges : tuple
        One ``(min, max, step)`` tuple (or a list of choices) per argument of
        ``fn`` that gets a control; the same abbreviations as
        ``ipywidgets.interact``.  Units follow ``fn``'s argument names.

    Returns
    -------
    object
        The value of the direct call ``fn()`` (the sliders are displayed, not returned).
    """
    sig = inspect.signature(fn)
    for name in ranges:
        if name not in sig.parameters:
            raise InputError("explore range", name, f"an argument of {fn.__name__}: {list(sig.parameters)}")
        if sig.parameters[name].default is inspect.Parameter.empty:
            raise InputError("explore range", name, "an argument with a default value (the direct call uses it)")
    value = fn()
    if os.environ.get("ECOCC_WIDGETS", "").lower() in ("off", "0", "no", "false"):
        return value
    try:
        import ipywidgets
        from IPython.display import display
    except ImportError:  # no ipywidgets (the `notebooks` extra): the direct call is all there is
        return value
    controls = {}
    for name, r in ranges.items():
        default = sig.parameters[name].default
        if isinstance(r, tuple) and len(r) in (2, 3):
            step = r[2] if len(r) == 3 else (r[1] - r[0]) / 50
            cls = ipywidgets.IntSlider if all(isinstance(v, int) for v in (*r, default)) else ipywidgets.FloatSlider
            controls[name] = cls(value=default, min=r[0], max=r[1], step=step, description=name,
                                 continuous_update=False, style={"description_width": "initial"})
        else:
            controls[name] = ipywidgets.Dropdown(options=list(r), value=default, description=name)
    # manual=True: the sliders do not re-run fn until asked, so executing the notebook runs fn only once
    w = ipywidgets.interactive(fn, {"manual": True, "manual_name": "Run with these values"}, **controls)
    display(w)
    return value


__all__ = ["explore"]
