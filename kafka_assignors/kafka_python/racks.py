"""Replica racks from a client library's cluster metadata (for rack-aware assignors).

kafka-python 3 keeps each partition's metadata (with ``replica_nodes``) in
``ClusterMetadata._partitions`` and exposes brokers (with ``rack``) through
``broker_metadata``; aiokafka's copy of the same class names them ``replicas``.
There is no public accessor for a partition's replicas, so this reads the
private map when it has the expected shape and otherwise asks the public
``is_replica_node`` broker by broker.  Unknown shapes give no rack data, which
rack-aware assignors treat like a cluster without ``broker.rack``.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger("kafka_assignors")


def replica_racks(cluster: Any, topic: str, count: int) -> dict[int, frozenset[str]]:
    """partition -> racks of its replicas' brokers (partitions without rack data left out)."""
    rack_of: dict[Any, str | None] = {}

    def rack(node: Any) -> str | None:
        if node not in rack_of:
            broker = cluster.broker_metadata(node)
            value = getattr(broker, "rack", None) if broker is not None else None
            rack_of[node] = value if isinstance(value, str) and value else None
        return rack_of[node]

    try:
        per_partition = getattr(cluster, "_partitions", {}).get(topic)
        if per_partition:
            out: dict[int, frozenset[str]] = {}
            for p in range(count):
                meta = per_partition.get(p)
                nodes = getattr(meta, "replica_nodes", None) or getattr(meta, "replicas", None)
                racks = frozenset(r for r in map(rack, nodes or ()) if r)
                if racks:
                    out[p] = racks
            return out
        if hasattr(cluster, "is_replica_node") and hasattr(cluster, "brokers"):
            from kafka.structs import TopicPartition

            nodes = [b.node_id for b in cluster.brokers()]
            out = {}
            for p in range(count):
                tp = TopicPartition(topic, p)
                racks = frozenset(r for n in nodes if cluster.is_replica_node(tp, n)
                                  for r in (rack(n),) if r)
                if racks:
                    out[p] = racks
            return out
    except Exception as exc:  # metadata of an unexpected shape: no rack data, not a failure
        log.warning("cannot read replica racks of topic %s (%s: %s); treating them as unknown",
                    topic, type(exc).__name__, exc)
    return {}
