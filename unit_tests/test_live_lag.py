"""The live-lag weight source: the consumer's own connection, bounded time, fallback on failure."""

from __future__ import annotations

import logging
import threading
import time
from types import SimpleNamespace
from typing import Any, ClassVar

import pytest
from kafka.admin import KafkaAdminClient
from kafka.coordinator.consumer import ConsumerCoordinator
from kafka.structs import OffsetAndMetadata, OffsetAndTimestamp
from kafka.structs import TopicPartition as KTP

import kafka_assignors as ka
from kafka_assignors.load.live_lag import LiveLag, WeightSourceError, admin_config
from kafka_assignors.load.sources import WeightContext

from .fakes import FakeCluster, FakeMember, assigned, subscription_of

SECURE = {
    "bootstrap_servers": ["broker-1:9096", "broker-2:9096"],
    "client_id": "billing-7",
    "security_protocol": "SASL_SSL",
    "sasl_mechanism": "SCRAM-SHA-512",
    "sasl_plain_username": "billing",
    "sasl_plain_password": "s3cret",
    "ssl_cafile": "/etc/ca.pem",
    "ssl_check_hostname": True,
    "api_version": (3, 9),
    "metadata_max_age_ms": 300000,  # not a connection setting: not copied
    "max_in_flight_requests_per_connection": 5,
}


class FakeAdmin:
    """Records how it was built; answers with fixed offsets (or fails / hangs)."""

    DEFAULT_CONFIG: ClassVar[dict[str, Any]] = KafkaAdminClient.DEFAULT_CONFIG
    built: ClassVar[list[dict[str, Any]]] = []
    closed: ClassVar[list[bool]] = []
    behaviour: ClassVar[str] = "ok"

    def __init__(self, **config: Any) -> None:
        FakeAdmin.built.append(config)
        if FakeAdmin.behaviour == "auth":
            raise PermissionError("SASL authentication failed: invalid credentials")

    def list_group_offsets(self, specs: dict[str, list[KTP]]) -> dict[str, Any]:
        if FakeAdmin.behaviour == "hang":
            time.sleep(3)
        (group, tps), = specs.items()
        return {group: {tp: OffsetAndMetadata(100 if tp.partition else -1, "", None)
                        for tp in tps if tp.partition != 2}}

    def list_partition_offsets(self, specs: dict[KTP, Any], **kw: Any) -> dict[KTP, Any]:
        return {tp: OffsetAndTimestamp(100 + 50 * tp.partition, -1, None) for tp in specs}

    def close(self) -> None:
        FakeAdmin.closed.append(True)


@pytest.fixture(autouse=True)
def _reset() -> None:
    FakeAdmin.built, FakeAdmin.closed, FakeAdmin.behaviour = [], [], "ok"


def fake_coordinator(connection: dict[str, Any], group_id: str = "billing") -> Any:
    """A ConsumerCoordinator shell carrying the attributes the live-lag source reads."""
    coord = ConsumerCoordinator.__new__(ConsumerCoordinator)
    coord.config = {"group_id": group_id, "isolation_level": "read_committed"}
    coord._manager = SimpleNamespace(config=dict(connection))
    return coord


def as_leader(coordinator: Any, assignor: Any, cluster: Any, members: Any) -> Any:
    """The assignor bound to ``coordinator`` (as kafka_assignors.kafka_python.KafkaConsumer
    binds its assignors) assigns as the leader."""
    assignor.bind(coordinator)
    return assignor.assign(cluster, members)


PARTS = [ka.TopicPartition("t", p) for p in range(4)]


def test_lag_is_log_end_minus_committed_and_uncommitted_is_left_out() -> None:
    """Lag per partition; a partition never committed gets no weight (it weighs the mean)."""
    source = LiveLag(admin_factory=FakeAdmin,
                     consumer={"connection": SECURE, "group_id": "billing"})
    got = source.weights(PARTS, WeightContext())
    assert got == {ka.TopicPartition("t", 1): 50.0, ka.TopicPartition("t", 3): 150.0}
    assert FakeAdmin.closed == [True]


def test_admin_client_gets_exactly_the_consumers_connection_settings() -> None:
    """Same servers, protocol, SASL and SSL settings; bounded timeouts; its own client id."""
    LiveLag(timeout_s=2, admin_factory=FakeAdmin,
            consumer={"connection": SECURE, "group_id": "billing"}).weights(PARTS, WeightContext())
    (config,) = FakeAdmin.built
    for key in ("bootstrap_servers", "security_protocol", "sasl_mechanism",
                "sasl_plain_username", "sasl_plain_password", "ssl_cafile", "ssl_check_hostname",
                "api_version"):
        assert config[key] == SECURE[key]
    assert "metadata_max_age_ms" not in config
    assert config["request_timeout_ms"] == 2000 and config["bootstrap_timeout_ms"] == 2000
    assert config["client_id"] == "billing-7-load-aware"
    assert set(config) <= set(KafkaAdminClient.DEFAULT_CONFIG)


def test_a_security_setting_the_admin_cannot_take_is_refused() -> None:
    """Rather than connect with weaker security, the source fails (and the leader falls back)."""
    with pytest.raises(WeightSourceError, match="weaker"):
        admin_config({**SECURE, "sasl_future_option": "x"}, KafkaAdminClient.DEFAULT_CONFIG, 1000)
    with pytest.raises(WeightSourceError, match="security_protocol"):
        admin_config({"bootstrap_servers": "b:9092"}, KafkaAdminClient.DEFAULT_CONFIG, 1000)


def test_settings_come_from_the_bound_coordinator() -> None:
    """An assignor bound to its consumer's coordinator reads lag with that consumer's settings."""
    leader = ka.LoadAwareAssignor(weights=LiveLag(admin_factory=FakeAdmin))
    members = [FakeMember(f"m{i}", subscription_of(leader, ["t"])) for i in range(2)]
    got = assigned(as_leader(fake_coordinator(SECURE), leader, FakeCluster({"t": 4}), members))
    assert FakeAdmin.built[0]["sasl_plain_password"] == "s3cret"
    assert sorted(p for v in got.values() for p in v["t"]) == [0, 1, 2, 3]
    # the two busiest partitions (lag 150 and the never-committed one at the mean) split up
    assert {3, 2} not in [set(v["t"]) for v in got.values()]


def test_without_a_coordinator_the_leader_falls_back(caplog: Any) -> None:
    """A plain consumer's assignor (not bound, no explicit settings): a warning naming how to
    give the settings, and counting."""
    leader = ka.LoadAwareAssignor()  # default weight source: live lag
    members = [FakeMember(f"m{i}", subscription_of(leader, ["t"])) for i in range(2)]
    with caplog.at_level(logging.WARNING, logger="kafka_assignors"):
        got = assigned(leader.assign(FakeCluster({"t": 4}), members))
    assert sorted(len(v["t"]) for v in got.values()) == [2, 2]
    assert "live group lag failed" in caplog.text and "WeightSourceError" in caplog.text
    assert "kafka_assignors.kafka_python.KafkaConsumer" in caplog.text


def test_bad_credentials_fall_back_with_the_reason_logged(caplog: Any) -> None:
    """An authentication failure is logged with its message; the group still gets a valid result."""
    FakeAdmin.behaviour = "auth"
    leader = ka.LoadAwareAssignor(weights=LiveLag(admin_factory=FakeAdmin))
    members = [FakeMember(f"m{i}", subscription_of(leader, ["t"])) for i in range(2)]
    with caplog.at_level(logging.WARNING, logger="kafka_assignors"):
        got = assigned(as_leader(fake_coordinator(SECURE), leader, FakeCluster({"t": 4}),
                                 members))
    assert sorted(len(v["t"]) for v in got.values()) == [2, 2]
    assert "invalid credentials" in caplog.text


def test_a_hanging_broker_costs_at_most_the_timeout(caplog: Any) -> None:
    """No answer within timeout_s: the leader stops waiting, warns and assigns by count."""
    FakeAdmin.behaviour = "hang"
    leader = ka.LoadAwareAssignor(weights=LiveLag(timeout_s=0.3, admin_factory=FakeAdmin))
    members = [FakeMember(f"m{i}", subscription_of(leader, ["t"])) for i in range(2)]
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="kafka_assignors"):
        got = assigned(as_leader(fake_coordinator(SECURE), leader, FakeCluster({"t": 4}),
                                 members))
    assert time.monotonic() - started < 2
    assert sorted(len(v["t"]) for v in got.values()) == [2, 2]
    assert "within 0.3 s" in caplog.text
    assert any(t.name == "kafka-assignors-live-lag" for t in threading.enumerate())
