"""Delay-differential solvers.  ``sympy_dde``, ``SympyDDE``, ``y`` and ``t`` (a user's DDE from SymPy
expressions, :mod:`ecocc.dde.user`) are importable from here; they load SymPy on first access only."""

_USER = ("sympy_dde", "SympyDDE", "y", "t")


def __getattr__(name):
    if name in _USER:
        from . import user
        return getattr(user, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
