"""The kafka-python binding: our strategies as kafka-python assignors, and the runtime.

* :mod:`.assignors`: every strategy as a kafka-python ``AbstractPartitionAssignor``
  (``kafka_assignors`` re-exports them); :mod:`.assignor` is their base class;
* :class:`KafkaConsumer`: ``kafka.KafkaConsumer`` with the consumer runtime
  (:mod:`.runtime`, docs/runtime.md), the one explicit way to turn it on::

      from kafka_assignors import CooperativeBalancedStickyAssignor
      from kafka_assignors.kafka_python import KafkaConsumer

      consumer = KafkaConsumer("orders", group_id="billing", bootstrap_servers="broker:9092",
                               partition_assignment_strategy=[CooperativeBalancedStickyAssignor])

* :func:`patch_rejoin_hang`: only the join fix, for a consumer built elsewhere;
* :mod:`.compat`: what differs on kafka-python 2.x.
"""

from __future__ import annotations

from . import instrument as _instrument  # noqa: F401  (registers kafka-python's metrics binding)
from .assignor import KafkaPythonAssignor
from .consumer import KafkaConsumer, RuntimeUnavailableError
from .fixes import patch_rejoin_hang

__all__ = ["KafkaConsumer", "KafkaPythonAssignor", "RuntimeUnavailableError", "patch_rejoin_hang"]
