"""The record every ledger entry produces, and the registry.

One record per distinct checkable claim of the five papers.  Ids are
``<paper>.<kind><number>``: ``paper`` one of :data:`PAPERS`; ``kind`` one of
:data:`KINDS`; the number is the paper's own (theorem, equation, figure,
table, section such as ``sec3B``), ``ex`` numbers the worked examples in
order of appearance.

Verdicts are about the statement **as printed**, under the paper's own model:

* ``holds`` -- numeric runs over the claim's range agree with it;
* ``approximate`` -- true within the paper's own stated approximation; the
  measured error is given in the record;
* ``fails`` -- a counterexample is given; where a corrected statement can be
  derived it is given and checked too (``corrected``);
* ``not-checkable`` -- needs what a fluid model lacks; the record says what,
  and which packet-level check could settle it.

Where the text admits several readings (delay or none, units, which N) each
reading carries its own verdict and evidence in ``readings``; the record's
own verdict is that of the reading the paper's text most directly states
(named in ``detail``).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Callable

PAPERS = {"petcp": "000", "cltcp": "001", "symbiosis": "002", "iguchi": "003", "aecp": "004"}
SEEDS = {
    "000": "000_76a89ab68a61e51d.txt", "001": "001_ceee9933a8b24a34.txt", "002": "002_2fcfdbe8ba8bf605.txt",
    "003": "003_20a360af4d80ed69.txt", "004": "004_3a45f1aa9a94cd50.txt",
}
KINDS = ("thm", "eq", "ex", "fig", "table", "sec")
VERDICTS = ("holds", "approximate", "fails", "not-checkable")
_ID = re.compile(r"^(petcp|cltcp|symbiosis|iguchi|aecp)\.(thm|eq|ex|fig|table|sec)[0-9A-Za-z]+(\.[a-z0-9]+)?$")


@dataclass
class Reading:
    """One reading of an ambiguous statement, with its own verdict and evidence."""

    name: str
    verdict: str
    detail: str
    evidence: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"Reading.verdict: {self.verdict!r} is not allowed: one of {VERDICTS}")


@dataclass
class Record:
    """A checked claim.

    Attributes
    ----------
    id, paper, source, statement : identification (``paper`` is the short name, e.g. ``"aecp"``;
        ``source`` names the seed file, section and equation)
    verdict : one of :data:`VERDICTS`
    detail : what the evidence shows, in words, with the numbers
    evidence : analytic values and numeric results (JSON-able; non-finite numbers become ``null``)
    readings : list of :class:`Reading` where the text admits several readings
    corrected : a corrected statement and its check, where the printed one fails
    figures : paths of figures written for the report (relative to the report directory)
    run : how to reproduce the numbers from the public API, in words
    """

    id: str
    paper: str
    source: str
    statement: str
    verdict: str
    detail: str
    evidence: dict = field(default_factory=dict)
    readings: list = field(default_factory=list)
    corrected: dict | None = None
    figures: list = field(default_factory=list)
    run: str = ""

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"Record.verdict of {self.id}: {self.verdict!r} is not allowed: one of {VERDICTS}")

    def as_dict(self) -> dict:
        """The record as JSON-able data (readings as dicts, non-finite numbers as None).

        Returns
        -------
        dict
            Every field of the record by name.
        """
        from ..results import _jsonable
        d = dict(self.__dict__)
        d["readings"] = [r.__dict__ for r in self.readings]
        return _jsonable(d)


@dataclass
class Claim:
    """A registered check: ``check(figdir)`` returns a :class:`Record`.

    ``figdir`` is a :class:`pathlib.Path` where the check may write figures
    (PNG and PDF) and list them in ``Record.figures``, or ``None`` (no figures).
    """

    id: str
    source: str
    statement: str
    check: Callable
    slow: bool = False

    @property
    def paper(self) -> str:
        return self.id.split(".", 1)[0]


REGISTRY: dict[str, Claim] = {}


def claim(id: str, source: str, statement: str, slow: bool = False):
    """Decorator: register a check function ``fn(figdir) -> Record`` under ``id``.

    Parameters
    ----------
    id : str
        ``<paper>.<kind><number>[.<suffix>]``: ``paper`` one of :data:`PAPERS`, ``kind`` one of
        :data:`KINDS` (e.g. ``"petcp.thm1"``, ``"aecp.table1.s2"``).
    source : str
        Seed file, section and equation the statement comes from.
    statement : str
        The claim as the paper states it.
    slow : bool
        Leave it out of default runs (see :func:`ecocc.claims.select`).

    Returns
    -------
    callable
        The decorator; it returns the function unchanged.

    Raises
    ------
    ValueError
        If ``id`` does not follow the pattern or is already registered (a programming error in a
        ledger module, not user input).
    """
    if not _ID.match(id):
        raise ValueError(f"claim id {id!r} does not follow <paper>.<kind><number> ({sorted(PAPERS)}, {KINDS})")
    if id in REGISTRY:
        raise ValueError(f"claim id {id!r} registered twice")

    def deco(fn):
        REGISTRY[id] = Claim(id, source, statement, fn, slow)
        return fn
    return deco


def record(cid: str, verdict: str, detail: str, evidence=None, readings=None, corrected=None, figures=None,
           run: str = "") -> Record:
    """Build the :class:`Record` of registered claim ``cid`` (id, paper, source and statement from the registry).

    Parameters
    ----------
    cid : str
        A registered claim id.
    verdict : str
        One of :data:`VERDICTS`.
    detail : str
        What the evidence shows, in words, with the numbers.
    evidence : dict, optional
        Analytic values and numeric results (JSON-able).
    readings : list of Reading, optional
        One verdict per reading where the text admits several.
    corrected : dict, optional
        A corrected statement and its check, where the printed one fails.
    figures : list of str, optional
        Figure paths relative to the report directory.
    run : str
        How to reproduce the numbers from the public API.

    Returns
    -------
    Record

    Raises
    ------
    KeyError
        If ``cid`` is not registered.
    ValueError
        If ``verdict`` is not one of :data:`VERDICTS`.
    """
    c = REGISTRY[cid]
    return Record(c.id, c.paper, c.source, c.statement, verdict, detail, evidence or {}, list(readings or []),
                  corrected, list(figures or []), run)


def rel_err(a: float, b: float) -> float:
    """Relative error ``abs(a - b) / abs(b)`` of ``a`` against the reference ``b``.

    Parameters
    ----------
    a : float
        The value checked.
    b : float
        The reference (same unit as ``a``).

    Returns
    -------
    float
        The relative error (dimensionless); 0 when both are 0, ``inf`` when only ``b`` is 0.
    """
    if b == 0:
        return 0.0 if a == 0 else math.inf
    return abs(a - b) / abs(b)


def first_time(t, cond) -> float:
    """First time ``t[k]`` where ``cond[k]`` holds; NaN if never.

    Parameters
    ----------
    t : array_like
        Sample times (s).
    cond : array_like of bool
        Condition at each sample, same length as ``t``.

    Returns
    -------
    float
        The first sample time where ``cond`` is True (s), NaN if it never is (no interpolation).
    """
    import numpy as np
    idx = np.flatnonzero(cond)
    return float(t[idx[0]]) if idx.size else math.nan


# ---------------------------------------------------------------------------
# On-disk cache of expensive evidence, keyed by everything that determines it
# ---------------------------------------------------------------------------

_DIGEST: str | None = None


def code_digest() -> str:
    """SHA-256 over every ``.py`` and ``.toml`` file of the ecocc package and the NumPy/SciPy versions.

    Any change to a model, solver, network, claims module, shipped scenario or
    library version changes the digest, so a cached result never survives a
    code change.  Computed once per process.

    Returns
    -------
    str
        The hex digest.
    """
    global _DIGEST
    if _DIGEST is None:
        import hashlib
        from pathlib import Path
        import numpy
        import scipy
        root = Path(__file__).resolve().parents[1]
        h = hashlib.sha256(f"numpy {numpy.__version__} scipy {scipy.__version__}".encode())
        for p in sorted([*root.rglob("*.py"), *root.rglob("*.toml")]):  # code and shipped scenarios
            h.update(str(p.relative_to(root)).encode())
            h.update(p.read_bytes())
        _DIGEST = h.hexdigest()
    return _DIGEST


def cache_dir():
    """The cache directory: ``$ECOCC_CLAIMS_CACHE`` or ``~/.cache/ecocc/claims``; ``None`` if set to ``off``.

    Returns
    -------
    pathlib.Path or None
        The directory (not created here); None when ``ECOCC_CLAIMS_CACHE`` is ``off``, ``0``, ``no``
        or ``false`` (any case).
    """
    import os
    from pathlib import Path
    env = os.environ.get("ECOCC_CLAIMS_CACHE")
    if env and env.lower() in ("off", "0", "no", "false"):
        return None
    return Path(env) if env else Path.home() / ".cache" / "ecocc" / "claims"


def cached(name: str, fn: Callable | None, lookup_only: bool = False, **key):
    """``fn()`` (a JSON-able value), cached on disk under ``name`` and ``key``.

    The cache key is the code digest (:func:`code_digest`), ``name`` and
    every keyword (parameters, grid, solver settings), so a cached value is
    reused only for the same code, the same parameters and the same solver
    settings.  Files are written atomically.  Set ``ECOCC_CLAIMS_CACHE=off``
    to disable.  An unreadable cache file is recomputed and overwritten.

    Parameters
    ----------
    name : str
        Name of the evidence (also the file name prefix).
    fn : callable or None
        ``fn()`` computes the value (JSON-able; NumPy arrays and non-finite floats are converted);
        ``None`` with ``lookup_only``.
    lookup_only : bool
        Compute nothing: return the cached value, or ``None`` when there is none (or the cache is off).
    **key
        Everything else that determines the value (parameters, grids, solver settings); values that
        are not JSON-able enter the key by ``repr``.

    Returns
    -------
    object
        The value as it reads back from JSON (tuples become lists, non-finite floats None), whether
        computed now or read from the cache; with the cache disabled, ``fn()``'s own value.
    """
    import hashlib
    import json
    import os
    d = cache_dir()
    if d is None:
        return None if lookup_only else fn()
    blob = json.dumps({"name": name, "code": code_digest(), "key": key}, sort_keys=True, default=repr)
    path = d / f"{name}-{hashlib.sha256(blob.encode()).hexdigest()[:20]}.json"
    if path.exists():
        try:
            return json.loads(path.read_text())["value"]
        except (ValueError, KeyError, OSError):
            pass
    if lookup_only:
        return None
    value = fn()
    from ..results import _jsonable
    d.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"key": json.loads(blob), "value": _jsonable(value)}))
    os.replace(tmp, path)
    return json.loads(json.dumps(_jsonable(value)))
