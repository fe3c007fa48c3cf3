"""The package's version: the one place it is written (pyproject.toml reads it, and so do
``kafka-assignors --version``, ``scripts/dist.sh`` and the broker plugin jar's build)."""

__version__ = "0.1.0"
