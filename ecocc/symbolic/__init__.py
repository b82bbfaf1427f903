"""Symbolic layer: linearize the models' own laws with SymPy.

:func:`synchronous_loop` builds N synchronous flows on one bottleneck from
the model's scalar laws called with SymPy symbols, solves the equilibrium,
forms the Jacobians of the linearized DDE ``z' = A0 z + A1 z(t - tau)`` and
the open loop ``L(s)`` (delay kept apart).  :func:`symmetric_optimum` tunes
a double-integrator loop by the symmetric optimum, derived by coefficient
matching.
"""
from .loop import RationalLoop, SyncLoop, synchronous_loop
from .optimum import SymmetricOptimum, symmetric_optimum

__all__ = ["RationalLoop", "SyncLoop", "synchronous_loop", "SymmetricOptimum", "symmetric_optimum"]
