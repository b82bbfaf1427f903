"""Register the shared CLTCP/AECP checks under one paper's ids."""
from __future__ import annotations

from .base import claim, record


def register(cid, source, statement, fn, *args, slow=False, run=""):
    """Register ``fn(figdir, *args)`` (or ``fn(*args)`` when it takes no figdir) as claim ``cid``."""
    import inspect
    takes_figdir = "figdir" in inspect.signature(fn).parameters

    @claim(cid, source, statement, slow=slow)
    def _check(figdir=None):
        out = fn(figdir, *args) if takes_figdir else fn(*args)
        verdict, detail, evidence, readings, corrected, figures = out
        return record(cid, verdict, detail, evidence, readings, corrected, figures, run)
    return _check


def not_checkable(cid, source, statement, missing, settle):
    """Register a claim a fluid model cannot settle: ``missing`` says what it lacks, ``settle`` which
    packet-level check could settle it."""
    @claim(cid, source, statement)
    def _check(figdir=None):
        return record(cid, "not-checkable", f"A fluid model lacks {missing}. Could be settled by: {settle}.",
                      {"missing": missing, "packet_level_check": settle})
    return _check
