"""kafka-python 2.3's cells (eager: 2.x has no cooperative protocol), ours beside 2.3 alone.

The same member script and cells as kafka-python 3 (``kafka_python.py``), run by the Python
of a venv holding kafka-python 2.3.3 (``integration_tests.client_venvs``; this checkout
through ``PYTHONPATH``). Ours: ``BalancedStickyAssignor``; alone: kafka-python 2.3.3's
``RangePartitionAssignor``, each passed as the README's one line does.
"""

from __future__ import annotations

from .kafka_python import BASE_OPTIONS, client_on
from .plans import Client

VERSION = "2.3.3"
#: kafka-python 2.x probes the broker's version inside ``KafkaConsumer(...)`` with a 2 s
#: timeout (``api_version_auto_timeout_ms``), which a loaded 2-core machine misses now and
#: then: NoBrokersAvailable before any assignor runs, on either side. Both sides get 30 s.
OPTIONS = {**BASE_OPTIONS, "api_version_auto_timeout_ms": 30_000}


def client() -> Client:
    return client_on(VERSION, name="kafka-python-2", protocols=("eager",), options=OPTIONS,
                     runtime="none (kafka-python 3 only)")
