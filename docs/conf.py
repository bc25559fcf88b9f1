"""Sphinx configuration of privdyn's reference documentation (``sphinx-build -W docs docs/_build/html``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import privdyn

# docs/_ext: this site's own Sphinx extensions.
sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))

project = "privdyn"
author = "privdyn developers"
copyright = "privdyn developers"  # noqa: A001 - Sphinx's name
release = privdyn.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "myst_parser",
    # An API page that leaves out a public name of its package (its __all__) is a warning, an error under -W.
    "api_coverage",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build"]

# The guides are Markdown (MyST); headings get anchors so that pages can link to sections.
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3

# The API pages document each subpackage's flat, lazily re-exported names (its __all__).
autodoc_default_options = {"members": True, "imported-members": True, "undoc-members": False,
                           "member-order": "bysource"}
# privdyn.torch is documented from its docstrings; where PyTorch is not installed (it is in CI), autodoc imports the
# package against stand-ins for torch and opacus so that the rest of the site still builds.
if importlib.util.find_spec("torch") is None:
    autodoc_mock_imports = ["torch", "opacus"]
# The public classes, functions and modules of every API page's package must be documented (docs/_ext/api_coverage.py).
# Constants are not required: autodoc reads a constant's doc comment from the module that documents it, so a constant
# a package re-exports from a submodule shows none on the package's page, though it has one where it is defined
# (with "data" required, 55 names of the pages' packages would be reported, privdyn.__version__ among them).
api_coverage_kinds = ("class", "function", "module")
autodoc_typehints = "description"
# Array-like parameters read "ArrayLike" (numpy.typing.ArrayLike), not the union it stands for.
autodoc_type_aliases = {"ArrayLike": "numpy.typing.ArrayLike"}
autodoc_typehints_format = "short"
autoclass_content = "class"
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
napoleon_use_ivar = True  # "Attributes:" as fields: dataclass fields are not described twice

html_theme = "alabaster"
html_title = f"privdyn {release}"
