"""kafka-python 2.3's cells (eager: 2.x has no cooperative protocol), ours beside 2.3 alone.

The same member script and cells as kafka-python 3 (``kafka_python.py``), run by the Python
of a venv holding kafka-python 2.3.3 (``integration_tests.client_venvs``; this checkout
through ``PYTHONPATH``). Ours: ``BalancedStickyAssignor``; alone: kafka-python 2.3.3's
``RangePartitionAssignor``, each passed as the README's one line does.
"""

from __future__ import annotations

import dataclasses

from .kafka_python import BASE_OPTIONS, CELLS, client_on
from .plans import Client

VERSION = "2.3.3"
#: kafka-python 2.x probes the broker's version inside ``KafkaConsumer(...)`` with a 2 s
#: timeout (``api_version_auto_timeout_ms``), which a loaded 2-core machine misses now and
#: then: NoBrokersAvailable before any assignor runs, on either side. Both sides get 30 s.
OPTIONS = {**BASE_OPTIONS, "api_version_auto_timeout_ms": 30_000}


#: kafka-python 2.x's iterator polls with update_offsets=False and can hand the same fetched
#: records out twice in a row, with no rebalance between (measured: 16 pairs of the
#: iterator-timeout cell at load ~50, alone repeated records in 3, ours in 5, every repeat
#: one member reading the same offsets again within milliseconds, mid-generation). Nothing
#: of ours is on that path (the runtime is kafka-python 3's only), so those counts are a
#: draw on both sides: records read twice are not judged in the iterator cells on 2.x.
ITERATOR_REPEATS = ("iterator", "iterator-timeout")
CELLS_2 = tuple(dataclasses.replace(cell, clean=False) if cell.key in ITERATOR_REPEATS
                else cell for cell in CELLS)


def client() -> Client:
    return dataclasses.replace(
        client_on(VERSION, name="kafka-python-2", protocols=("eager",), options=OPTIONS,
                  runtime="none (kafka-python 3 only)", cells=CELLS_2),
        ours_plain=True)
