"""The claims ledger: one record per checkable claim of the five papers.

Each paper has its own module (``petcp``, ``cltcp``, ``symbiosis``,
``iguchi``, ``aecp``) registering checks with :func:`base.claim`; a check
returns a :class:`base.Record` with a verdict (``holds``, ``approximate``,
``fails``, ``not-checkable``), its evidence and, where the text admits
several readings, one verdict per reading.  Every check builds its runs from
the public API, so ``ecocc claims --only ID`` reproduces it.  Expensive
evidence is cached on disk keyed by the code, the parameters and the solver
settings (:func:`base.cached`).
"""
from __future__ import annotations

from .base import (KINDS, PAPERS, REGISTRY, SEEDS, VERDICTS, Claim, Reading, Record, cached, claim,  # noqa: F401
                   record)
from . import aecp, cltcp, iguchi, petcp, symbiosis  # noqa: F401,E402  (each registers its paper's records)


def select(ids=None, papers=None, include_slow=False) -> list[Claim]:
    """The registered claims chosen by ``ids`` (exact ids), ``papers`` (short names) and ``include_slow``.

    Explicit ``ids`` run even when marked slow.

    Parameters
    ----------
    ids : list of str, optional
        Exact claim ids (e.g. ``"petcp.thm1"``); default: every registered claim.
    papers : list of str, optional
        Keep only these papers' claims (keys of :data:`PAPERS`: ``petcp``, ``cltcp``, ``symbiosis``,
        ``iguchi``, ``aecp``).
    include_slow : bool
        Without ``ids``, also choose the claims marked slow.

    Returns
    -------
    list of Claim
        In the order of ``ids``, else in registration order.

    Raises
    ------
    InputError
        If an id is not registered or a paper is not in :data:`PAPERS`.
    """
    from ..errors import InputError
    for i in ids or ():
        if i not in REGISTRY:
            raise InputError("claim id", i, f"one of {sorted(REGISTRY)}")
    for p in papers or ():
        if p not in PAPERS:
            raise InputError("paper", p, f"one of {sorted(PAPERS)}")
    if ids:
        chosen = [REGISTRY[i] for i in ids]
    else:
        chosen = [c for c in REGISTRY.values() if include_slow or not c.slow]
    if papers:
        chosen = [c for c in chosen if c.paper in papers]
    return chosen


def evaluate(ids=None, papers=None, include_slow=False, progress=None, figdir=None) -> list[Record]:
    """Run the checks and return their records.

    Parameters
    ----------
    ids : list of str, optional
        Claim ids to run (default: all, slow ones only with ``include_slow``).
    papers : list of str, optional
        Keep only these papers (``petcp``, ``cltcp``, ``symbiosis``, ``iguchi``, ``aecp``).
    include_slow : bool
        Also run the claims marked slow.
    progress : callable, optional
        ``progress(claim_id)`` is called before each check (e.g. to advance a progress bar).
    figdir : path, optional
        Directory where checks that draw figures write them (PNG and PDF).

    Returns
    -------
    list of Record
        One record per chosen claim, in the order of :func:`select`.

    Raises
    ------
    InputError
        As :func:`select`, for an unknown id or paper.
    """
    from pathlib import Path
    out = []
    fd = Path(figdir) if figdir is not None else None
    for c in select(ids, papers, include_slow):
        if progress:
            progress(c.id)
        out.append(c.check(fd))
    return out


def counts(records) -> dict:
    """Per paper: how many records hold, are approximate, fail, are not checkable.

    Parameters
    ----------
    records : iterable of Record
        Checked claims, e.g. from :func:`evaluate`.

    Returns
    -------
    dict
        ``{paper short name: {verdict: count}}`` with every verdict of :data:`VERDICTS` present
        (0 where none); papers without records are absent.
    """
    res: dict = {}
    for r in records:
        d = res.setdefault(r.paper, {v: 0 for v in VERDICTS})
        d[r.verdict] += 1
    return res
