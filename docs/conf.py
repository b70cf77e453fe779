"""Sphinx configuration of the scorecore documentation (``make docs``)."""

from __future__ import annotations

import sys
from pathlib import Path

# Sphinx with autodoc, not mkdocs + mkdocstrings: the docstrings are written with Sphinx roles
# (:class:, :func:, :meth:) and doctest examples, which autodoc renders as they are written.
DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path[:0] = [str(ROOT), str(ROOT / "adapters"), str(DOCS / "_ext")]

project = "scorecore"
author = "scorecore contributors"
copyright = "scorecore contributors"
root_doc = "index"
extensions = [
    "myst_parser",  # the guides are Markdown
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",  # the docstrings' Google-style Args: / Returns: / Raises: sections
    "reference",  # docs/_ext/reference.py: a page per public module, generated from its __all__
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "_ext"]

# Every reference must resolve (make docs runs with -W -n): an unknown name fails the build.
nitpicky = True
# Names such as `Scorer` stand for themselves in ``code`` (docutils' default role would italicise).
default_role = "code"

autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_preserve_defaults = True
autodoc_typehints = "signature"
autodoc_class_signature = "separated"
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False

# Links between guides name the page and a heading: `[x](economics.md#resume-after-a-kill)`.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

html_theme = "furo"
html_title = "scorecore"
html_static_path: list[str] = []
