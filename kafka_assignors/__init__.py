"""Kafka consumer partition assignors: balanced, sticky, load-aware, rack-aware and more.

The public API is re-exported here; implementations live in private modules.
Importing this package never imports Spark, Docker or Testcontainers.
"""

from __future__ import annotations

__version__ = "0.1.0.dev0"

__all__ = ["__version__"]
