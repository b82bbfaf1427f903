"""Stability of the linearized loops with exact delays.

* :func:`margins` -- gain / phase / delay margins and critical delay of
  ``L(s) exp(-s tau)`` (exact delay, D-subdivision crossing count);
* :func:`pade_check` -- the same with Padé approximants (python-control);
* :func:`characteristic_roots` -- rightmost roots of
  ``z' = A0 z + sum_k A_k z(t - tau_k)`` (collocation + Newton, certified by an
  argument-principle root count);
* :func:`analyze` -- all of it for a model at a parameter point;
* :func:`stability_map`, :func:`plot_stability_map` -- a parameter plane;
* :func:`reno_loop` -- the Reno/RED loop as simulated, or the classic one of Hollot, Misra,
  Towsley & Gong 2001 (``reading="hmtg"``);
* :func:`to_control`, :func:`bode_plot`, :func:`nyquist_plot` -- python-control
  objects and frequency plots with the delay exact.
"""
from .margins import MarginResult, PadeCheck, delay_crossings, frequency_response, gain_crossovers, margins, pade_check
from .roots import CharacteristicRoots, characteristic_roots
from .analysis import LoopAnalysis, analyze, simulate_decay, SimDecay
from .maps import plot_stability_map, stability_map
from .reno_loop import reno_loop
from .control_io import ControlLoop, bode_plot, nyquist_plot, to_control

__all__ = ["MarginResult", "PadeCheck", "delay_crossings", "frequency_response", "gain_crossovers", "margins",
           "pade_check", "CharacteristicRoots", "characteristic_roots", "LoopAnalysis", "analyze",
           "simulate_decay", "SimDecay", "stability_map", "plot_stability_map", "reno_loop", "ControlLoop",
           "to_control", "bode_plot", "nyquist_plot"]
