"""Model registry: name -> model class."""
from __future__ import annotations

from ..errors import InputError
from .aecp import AECP, AECPParams
from .base import NUMPY_OPS, ModelParams, NetworkModel
from .petcp import PETCP, PETCPParams
from .reno import Reno, RenoParams
from .symbiosis import Symbiosis, SymbiosisParams
from .hstcp import HSTCP, HSTCPParams
from .scalable import Scalable, ScalableParams
from .fast import FAST, FASTParams
from .xcp import XCP, XCPParams


class CLTCP(AECP):
    """CLTCP: the conference version of AECP; the same model (eq. 6 of 001)."""

    name = "cltcp"
    description = "CLTCP coupled logistic model, eq. (6) of 001 (same as AECP)"


REGISTRY = {cls.name: cls for cls in (AECP, CLTCP, PETCP, Symbiosis, Reno, HSTCP, Scalable, FAST, XCP)}


def get_model(model) -> NetworkModel:
    """A model instance from a registry name, a model class or an instance.

    Parameters
    ----------
    model : str or NetworkModel or type
        A name of :data:`REGISTRY` (case-insensitive: ``"aecp"``, ``"cltcp"``, ``"petcp"``,
        ``"symbiosis"``, ``"reno"``, ``"hstcp"``, ``"stcp"``, ``"fast"``, ``"xcp"``), a
        :class:`NetworkModel` subclass (instantiated) or an instance (returned as is).

    Returns
    -------
    NetworkModel
        A new instance for a name or class; ``model`` itself for an instance.

    Raises
    ------
    InputError
        If the name is not in the registry (the message lists the names).
    """
    if isinstance(model, NetworkModel):
        return model
    if isinstance(model, type) and issubclass(model, NetworkModel):
        return model()
    key = str(model).lower()
    if key not in REGISTRY:
        raise InputError("model", model, f"one of {sorted(REGISTRY)}")
    return REGISTRY[key]()


__all__ = ["AECP", "AECPParams", "CLTCP", "PETCP", "PETCPParams", "Symbiosis", "SymbiosisParams", "Reno",
           "RenoParams", "HSTCP", "HSTCPParams", "Scalable", "ScalableParams", "FAST", "FASTParams", "XCP",
           "XCPParams", "NetworkModel", "ModelParams", "REGISTRY", "get_model", "NUMPY_OPS", "SYMPY_OPS"]


def __getattr__(name):
    if name == "SYMPY_OPS":  # lazy: see ecocc.models.base
        from . import base
        return base.SYMPY_OPS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
