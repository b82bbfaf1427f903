"""Sphinx configuration of the ecocc API reference: autodoc + numpydoc, built with warnings as errors
(``python -m sphinx -W --keep-going -b html docs docs/_build/html``)."""
import os
import sys

sys.path.insert(0, os.path.abspath(".."))

project = "ecocc"
author = "The ecocc authors"
copyright = "2026, The ecocc authors"
release = "0.1.0"

extensions = ["sphinx.ext.autodoc", "sphinx.ext.autosummary", "numpydoc", "sphinx.ext.mathjax"]
autosummary_generate = False
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
autodoc_typehints = "none"  # the numpydoc sections carry the types and units
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
exclude_patterns = ["_build", "notes"]
html_theme = "alabaster"
nitpicky = False
suppress_warnings = []
