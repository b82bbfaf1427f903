"""Stability of the linearized loops with exact delays.

* :func:`margins` -- gain / phase / delay margins and critical delay of
  ``L(s) exp(-s tau)`` (exact delay, D-subdivision crossing count);
* :func:`pade_check` -- the same with Padé approximants (python-control);
* :func:`characteristic_roots` -- rightmost roots of
  ``z' = A0 z + sum_k A_k z(t - tau_k)`` (Chebyshev collocation + Newton);
* :func:`analyze` -- all of it for a model at a parameter point;
* :func:`stability_map`, :func:`plot_stability_map` -- a parameter plane.
"""
from .margins import MarginResult, PadeCheck, delay_crossings, frequency_response, gain_crossovers, margins, pade_check
from .roots import CharacteristicRoots, characteristic_roots
from .analysis import LoopAnalysis, analyze, simulate_decay, SimDecay
from .maps import plot_stability_map, stability_map

__all__ = ["MarginResult", "PadeCheck", "delay_crossings", "frequency_response", "gain_crossovers", "margins",
           "pade_check", "CharacteristicRoots", "characteristic_roots", "LoopAnalysis", "analyze",
           "simulate_decay", "SimDecay", "stability_map", "plot_stability_map"]
