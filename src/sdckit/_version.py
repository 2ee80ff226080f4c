"""The version of sdckit, in this one place.

``pyproject.toml`` reads it for the package metadata (``[tool.setuptools.dynamic]``), and
``sdckit.__version__`` (the CLI's ``--version``, the reports and the certificate) re-exports it.
"""

__version__ = "0.1.0"
