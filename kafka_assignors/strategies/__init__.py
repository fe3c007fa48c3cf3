"""The strategies: what each assignor assigns, independent of any Kafka client.

One module per strategy family, each with its eager and its cooperative variant. A
client binding turns a strategy into that client's assignor: ``kafka_assignors``'
top-level ``BalancedStickyAssignor`` is :class:`BalancedSticky` for kafka-python
(``kafka_assignors.kafka_python.assignors``), ``kafka_assignors.aiokafka`` wraps the
same for aiokafka, and the confluent bridge runs them through kafka-python.
"""

from __future__ import annotations

from .balanced_sticky import BalancedSticky, CooperativeBalancedSticky
from .base import Strategy
from .broadcast import Broadcast, CooperativeBroadcast
from .co_partitioned import CooperativeCoPartitioned, CoPartitioned
from .load_aware import CooperativeLoadAware, LoadAware
from .pinned import CooperativePinned, Pinned, parse_pins
from .rack_aware import CooperativeRackAware, RackAware

__all__ = [
    "BalancedSticky",
    "Broadcast",
    "CoPartitioned",
    "CooperativeBalancedSticky",
    "CooperativeBroadcast",
    "CooperativeCoPartitioned",
    "CooperativeLoadAware",
    "CooperativePinned",
    "CooperativeRackAware",
    "LoadAware",
    "Pinned",
    "RackAware",
    "Strategy",
    "parse_pins",
]
