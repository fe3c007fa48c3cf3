"""Real Kafka for tests and demos: brokers in Docker (Testcontainers) and a consumer-group runner.

Nothing here is imported by ``import kafka_assignors``. Docker and Testcontainers are
imported lazily, only when a broker is started; the group runner needs only
kafka-python and works against any cluster (e.g. ``BOOTSTRAP_SERVERS``).
"""

from __future__ import annotations

from .cluster import (
    BrokerNode,
    BrokerStartError,
    KafkaCluster,
    NodeConfig,
    close_all,
    start_cluster,
    start_single_broker,
)
from .events import MemberConfig, MemberView
from .groups import (
    GroupNotStableError,
    GroupRunner,
    GroupRunnerError,
    MemberFailedError,
    close_all_groups,
)
from .image import DEFAULT_IMAGE, ImageError, broker_image, ensure_image
from .strategies import StrategyError, resolve_strategy

__all__ = [
    "DEFAULT_IMAGE",
    "BrokerNode",
    "BrokerStartError",
    "GroupNotStableError",
    "GroupRunner",
    "GroupRunnerError",
    "ImageError",
    "KafkaCluster",
    "MemberConfig",
    "MemberFailedError",
    "MemberView",
    "NodeConfig",
    "StrategyError",
    "broker_image",
    "close_all",
    "close_all_groups",
    "ensure_image",
    "resolve_strategy",
    "start_cluster",
    "start_single_broker",
]
