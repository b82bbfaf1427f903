"""``ecocc params MODEL``: every parameter of a model with its units, default, meaning, the model's equations
and the paper they come from (read from the Params dataclass and the model's docstrings, so they never
disagree with the code)."""
from __future__ import annotations

import dataclasses
import inspect
import re

import click

#: the papers (``/work/shared/seeds/README.md``): id -> authors and title
PAPERS = {
    "000": 'Huang et al., "End-to-end Congestion Control for High Speed Networks Based on Population Ecology '
           'Models" (PE-TCP)',
    "001": 'Huang et al., "Improving the Convergence and Stability of Congestion Control Algorithm" (CLTCP)',
    "002": 'Hasegawa & Murata, "TCP Symbiosis: Congestion Control Mechanisms of TCP based on Lotka-Volterra '
           'Competition Model"',
    "003": 'Iguchi, Hasegawa & Murata, "A New Congestion Control Mechanism of TCP with Inline Network Measurement"',
    "004": 'Huang et al., "Distributed bandwidth allocation based on alternating evolution algorithm" (AECP, '
           'J. Parallel Distrib. Comput. 2010)',
}

_SUFFIX_UNITS = (("_per_s", "1/s"), ("_pps2", "packets/s per second"), ("_pps", "packets/s"),
                 ("_pkts", "packets"), ("_s", "s"), ("_mbps", "Mbit/s"))


def unit_of(name: str) -> str:
    """Units read from a parameter name's suffix (the naming convention of ecocc).

    Parameters
    ----------
    name : str
        A parameter name such as ``alpha_per_s`` or ``q0_pkts``.

    Returns
    -------
    str
        E.g. ``"1/s"`` for ``alpha_per_s``; ``"1 (dimensionless or a choice)"`` without a suffix.
    """
    for suf, unit in _SUFFIX_UNITS:
        if name.endswith(suf):
            return unit
    return "1 (dimensionless or a choice)"


def _doc_entries(doc: str) -> dict:
    """``name : description`` entries of a Params docstring (continuation lines joined); a line naming
    several parameters (``a, b : ...``) gives each the same description."""
    out, current = {}, None
    # cleandoc: Python 3.13 strips the indentation of docstrings at compile time, older ones keep it
    for line in inspect.cleandoc(doc or "").splitlines():
        m = re.match(r"^([A-Za-z_][\w, ]*?)\s+:\s+(.*)$", line)
        if m:
            current = [n.strip() for n in m[1].split(",")]
            for n in current:
                out[n] = m[2].strip()
        elif current and line.startswith("    ") and line.strip():
            for n in current:
                out[n] += " " + line.strip()
        elif not line.strip():
            current = None
    return out


def describe(model_name: str) -> dict:
    """Describe a model's parameters from its Params dataclass and docstrings.

    Parameters
    ----------
    model_name : str
        A registry name (``ecocc params`` lists them).

    Returns
    -------
    dict
        ``model``, ``summary``, ``equations`` (the model module's docstring), ``papers`` (id -> title) and
        ``parameters``, each with ``name``, ``units``, ``default``, ``description``, ``choices``.
    """
    from .models import get_model
    m = get_model(model_name)
    P = m.Params
    docs = {}
    for klass in reversed(P.__mro__):  # inherited fields keep their base class's description (LossParams' RED fields)
        docs.update(_doc_entries(klass.__doc__ or "") if klass is not object else {})
    params = []
    for f in dataclasses.fields(P):
        if not f.init:
            continue
        default = f.default if f.default is not dataclasses.MISSING else (
            f.default_factory() if f.default_factory is not dataclasses.MISSING else None)
        params.append({"name": f.name, "units": unit_of(f.name), "default": default,
                       "description": docs.get(f.name, "(no description in the docstring)"),
                       "choices": list(P.CHOICES.get(f.name, ())) or None})
    module_doc = inspect.getdoc(inspect.getmodule(type(m))) or ""
    header = (P.__doc__ or "").strip().splitlines()[0] if P.__doc__ else ""
    ids = sorted(set(re.findall(r"\b(00[0-4])\b", module_doc + " " + header + " " + m.description)))
    return {"model": m.name, "class": type(m).__name__, "params_class": P.__name__, "summary": m.description,
            "params_doc": header, "equations": module_doc, "papers": {i: PAPERS[i] for i in ids}, "parameters": params}


@click.command("params")
@click.argument("model", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def params_cmd(model, as_json):
    """Parameters of MODEL (units, default, meaning), its equations and the paper; without MODEL, the models."""
    from .models import REGISTRY
    from .results import json_dumps
    if model is None:
        for name in REGISTRY:
            click.echo(f"{name:10s} {describe(name)['summary']}")
        click.echo("`ecocc params MODEL` for the parameters of one.")
        return
    d = describe(model)
    if as_json:
        click.echo(json_dumps(d, indent=2))
        return
    click.echo(f"{d['model']} ({d['class']}, parameters {d['params_class']}): {d['summary']}")
    if d["params_doc"]:
        click.echo(f"  {d['params_doc']}")
    click.echo("")
    w = max(len(p["name"]) for p in d["parameters"])
    for p in d["parameters"]:
        choice = f"; one of {', '.join(map(repr, p['choices']))}" if p["choices"] else ""
        click.echo(f"  {p['name']:<{w}s}  [{p['units']}]  default {p['default']!r}{choice}")
        click.echo(f"  {'':<{w}s}  {p['description']}")
    click.echo("")
    click.echo("Equations (from the model's module):")
    for line in d["equations"].splitlines():
        click.echo(f"  {line}")
    click.echo("")
    click.echo("Papers (texts in /work/shared/seeds/):")
    for i, t in d["papers"].items():
        click.echo(f"  {i}: {t}")
    click.echo("Set a parameter with `ecocc simulate SCENARIO --set NAME=VALUE` or in a scenario's [params] table.")
