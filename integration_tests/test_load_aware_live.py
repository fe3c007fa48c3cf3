"""load-aware with live lag on real brokers: skewed traffic, a lagging group, SASL credentials."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypedDict

import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka import errors as KafkaErrors
from kafka.errors import KafkaError
from kafka.structs import OffsetAndMetadata
from kafka.structs import TopicPartition as KTP

from kafka_assignors.embedded import GroupRunner, KafkaCluster, NodeConfig, ensure_image
from kafka_assignors.embedded._ports import free_ports
from kafka_assignors.embedded.cluster import _start_containers, new_cluster_id
from kafka_assignors.embedded.events import CommitMode

from .conftest import BrokerHandle, byo_bootstrap


class _MemberOptions(TypedDict):
    """The MemberConfig fields MEMBER sets (GroupRunner's **member_options)."""

    commit: CommitMode
    log_level: str
    session_timeout_ms: int
    heartbeat_interval_ms: int
    poll_timeout_ms: int


LOAD_AWARE = "kafka_assignors:LoadAwareAssignor"  # default weight source: live lag
HOT = {0: 2000, 1: 2000}  # messages per hot partition; the others get COLD each
COLD = 20
PARTITIONS = 6
# members never commit, so the lag the leader reads stays what the producer wrote
# (poll_timeout_ms: see test_rack_aware_live.MEMBER)
MEMBER: _MemberOptions = {"commit": "none", "log_level": "INFO", "session_timeout_ms": 6_000,
                          "heartbeat_interval_ms": 500, "poll_timeout_ms": 1_000}
SASL_USER, SASL_PASSWORD = "alice", "alice-secret"


def produce_skewed(bootstrap: str, topic: str, **security: Any) -> dict[int, int]:
    """Write HOT messages to the hot partitions and COLD to the rest; returns counts."""
    counts = {p: HOT.get(p, COLD) for p in range(PARTITIONS)}
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=20, **security)
    try:
        for p, n in counts.items():
            for i in range(n):
                producer.send(topic, value=b"x" * 100, key=str(i).encode(), partition=p)
        producer.flush(timeout=60)
    finally:
        producer.close(timeout=10)
    return counts


def commit_start(bootstrap: str, group: str, topic: str, **security: Any) -> None:
    """The group has committed offset 0 everywhere: everything written is lag."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=15_000, **security)
    deadline = time.monotonic() + 60
    offsets = {KTP(topic, p): OffsetAndMetadata(0, "", None) for p in range(PARTITIONS)}
    try:
        while True:
            try:  # a new broker creates __consumer_offsets first: retry retriable errors
                errors = admin.alter_group_offsets(group, offsets)
                failed = {tp: e for tp, e in errors.items() if e is not KafkaErrors.NoError}
                if not failed:
                    return
                if time.monotonic() > deadline or not all(e.retriable for e in failed.values()):
                    raise AssertionError(f"cannot commit the start offsets: {failed}")
            except KafkaError as exc:
                if not exc.retriable or time.monotonic() > deadline:
                    raise
            time.sleep(0.5)
    finally:
        admin.close()


def heaviest_over_mean(state: Mapping[str, frozenset[tuple[str, int]]],
                       counts: Mapping[int, int]) -> float:
    loads = [sum(counts[p] for _t, p in tps) for tps in state.values()]
    return max(loads) / (sum(loads) / len(loads))


def logs(group: GroupRunner) -> str:
    return "\n".join(group.member_log(v.index) for v in group.members())


def test_live_lag_spreads_the_hot_partitions_where_range_piles_them_up(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str],
    make_group: Callable[..., GroupRunner], unique_name: Callable[[str], str],
) -> None:
    """With real skewed lag, load-aware gives each member one hot partition (loads even);
    range, counting partitions, gives both to the first member."""
    topic = make_topic(PARTITIONS)
    counts = produce_skewed(kafka_broker.bootstrap, topic)
    ratios = {}
    for strategy in ("range", LOAD_AWARE):
        group_id = unique_name("group")
        commit_start(kafka_broker.bootstrap, group_id, topic)
        group = make_group([topic], [strategy], group_id=group_id, members=2, **MEMBER)
        state = group.wait_stable(timeout=90)
        ratios[strategy] = heaviest_over_mean(state, counts)
        if strategy == LOAD_AWARE:
            hot_per_member = sorted(sum(1 for _t, p in tps if p in HOT) for tps in state.values())
            assert hot_per_member == [1, 1], state
            assert "from live group lag" in logs(group)
        group.close()
    print(f"\nheaviest/mean lag: range {ratios['range']:.2f}, "
          f"load-aware {ratios[LOAD_AWARE]:.2f}")
    assert ratios[LOAD_AWARE] <= 1.05 < ratios["range"]


def test_profile_published_to_a_compacted_topic_spreads_the_hot_partitions(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str],
    make_group: Callable[..., GroupRunner], unique_name: Callable[[str], str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The pipeline publishes a profile twice (first every partition alike, then two hot);
    the leader reads the compacted topic, takes the newest entry per partition and gives
    each member one hot partition."""
    from kafka_assignors.load.profile import LoadProfile, PartitionLoad
    from kafka_assignors.pipeline.kafka_io import publish

    topic = make_topic(PARTITIONS)
    profile_topic = unique_name("profile")
    older = dict.fromkeys(range(PARTITIONS), 7.0)  # total 42: must not win
    newer = {p: 100.0 if p in HOT else 1.0 for p in range(PARTITIONS)}  # total 204
    for weights in (older, newer):
        profile = LoadProfile(tuple(PartitionLoad(topic, p, w) for p, w in weights.items()),
                              "bytes_per_s")
        assert publish(profile, kafka_broker.bootstrap, profile_topic) == PARTITIONS
    monkeypatch.setenv("KA_TEST_PROFILE_TOPIC", profile_topic)
    group = make_group([topic], ["integration_tests.new_assignor_configs:LOAD_AWARE_PROFILE_TOPIC"],
                       members=2, **MEMBER)
    state = group.wait_stable(timeout=90)
    text = logs(group)
    newest = f"6 of 6 partition weights from load profile topic '{profile_topic}' (total 204)"
    assert newest in text, text[-4000:]
    hot_per_member = sorted(sum(1 for _t, p in tps if p in HOT) for tps in state.values())
    assert hot_per_member == [1, 1], state


# --- a SASL-protected listener -------------------------------------------------------


@pytest.fixture(scope="module")
def sasl_broker() -> Iterator[tuple[KafkaCluster, str]]:
    """One broker with a PLAINTEXT listener (for the harness) and a SASL_PLAINTEXT/PLAIN one."""
    if byo_bootstrap() is not None:
        pytest.skip("BOOTSTRAP_SERVERS is set: the SASL test starts its own broker container")
    broker_port, controller_port, sasl_port = free_ports(3)
    node = NodeConfig(1, broker_port, controller_port, "r1")
    jaas = ("org.apache.kafka.common.security.plain.PlainLoginModule required "
            f'user_{SASL_USER}="{SASL_PASSWORD}";')
    env = {
        "KAFKA_LISTENERS": (f"PLAINTEXT://127.0.0.1:{broker_port},"
                            f"CONTROLLER://127.0.0.1:{controller_port},"
                            f"SASL_PLAINTEXT://127.0.0.1:{sasl_port}"),
        "KAFKA_ADVERTISED_LISTENERS": (f"PLAINTEXT://127.0.0.1:{broker_port},"
                                       f"SASL_PLAINTEXT://127.0.0.1:{sasl_port}"),
        "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": (
            "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT"),
        "KAFKA_SASL_ENABLED_MECHANISMS": "PLAIN",
        "KAFKA_LISTENER_NAME_SASL__PLAINTEXT_PLAIN_SASL_JAAS_CONFIG": jaas,
    }
    image, cluster_id = ensure_image(), new_cluster_id()
    cluster = KafkaCluster(_start_containers(image, [node], cluster_id, env, False),
                           image, cluster_id)
    try:
        cluster.wait_ready(120)
        yield cluster, f"127.0.0.1:{sasl_port}"
    finally:
        cluster.close()


SECURITY = {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN",
            "sasl_plain_username": SASL_USER, "sasl_plain_password": SASL_PASSWORD}


def test_lag_is_read_with_the_consumers_sasl_credentials(
    sasl_broker: tuple[KafkaCluster, str], unique_name: Callable[[str], str],
) -> None:
    """Members connect only through SASL; the leader's lag read uses the same credentials
    and succeeds, so the hot partitions are spread."""
    _cluster, bootstrap = sasl_broker
    from kafka_assignors.embedded.admin import create_topic

    topic = unique_name("topic")
    create_topic(_cluster.bootstrap, topic, PARTITIONS)
    counts = produce_skewed(bootstrap, topic, **SECURITY)
    group_id = unique_name("group")
    commit_start(bootstrap, group_id, topic, **SECURITY)
    with GroupRunner(bootstrap, group_id, [topic], [LOAD_AWARE], members=2,
                     consumer_config=dict(SECURITY), **MEMBER) as group:
        state = group.wait_stable(timeout=90, expected={topic: PARTITIONS})
        text = logs(group)
    assert "from live group lag" in text and "weight source" not in text, text[-6000:]
    assert heaviest_over_mean(state, counts) <= 1.05


def test_without_valid_credentials_the_group_falls_back_and_still_assigns(
    sasl_broker: tuple[KafkaCluster, str], unique_name: Callable[[str], str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A lag read with a wrong password fails; the leader logs why, assigns by count, and
    the group becomes stable with every partition assigned once."""
    cluster, bootstrap = sasl_broker
    from kafka_assignors.embedded.admin import create_topic

    topic = unique_name("topic")
    create_topic(cluster.bootstrap, topic, PARTITIONS)
    group_id = unique_name("group")
    monkeypatch.setenv("KA_TEST_SASL_BOOTSTRAP", bootstrap)
    monkeypatch.setenv("KA_TEST_GROUP", group_id)
    spec = "integration_tests.new_assignor_configs:LOAD_AWARE_WRONG_PASSWORD"
    started = time.monotonic()
    # the leader may spend the lag read's whole timeout (5 s) failing to log in; kafka-python
    # 3.0.12 drops a join result that arrives while no poll() waits, so members poll longer
    # than that (README, Known limits)
    member: _MemberOptions = {**MEMBER, "poll_timeout_ms": 6_000}
    with GroupRunner(bootstrap, group_id, [topic], [spec], members=2,
                     consumer_config=dict(SECURITY), **member) as group:
        state = group.wait_stable(timeout=120, expected={topic: PARTITIONS})
        text = logs(group)
    assert "live group lag failed" in text and "partition count" in text, text[-6000:]
    assert sorted(len(tps) for tps in state.values()) == [3, 3]
    assert time.monotonic() - started < 110


def test_profile_topic_is_read_with_the_consumers_sasl_credentials(
    sasl_broker: tuple[KafkaCluster, str], unique_name: Callable[[str], str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Members know only the SASL listener; the leader reads the profile topic through it
    with their credentials (no fallback), so the hot partitions are spread."""
    cluster, bootstrap = sasl_broker
    from kafka_assignors.embedded.admin import create_topic
    from kafka_assignors.load.profile import LoadProfile, PartitionLoad
    from kafka_assignors.pipeline.kafka_io import publish

    topic, profile_topic = unique_name("topic"), unique_name("profile")
    create_topic(cluster.bootstrap, topic, PARTITIONS)
    weights = {p: 100.0 if p in HOT else 1.0 for p in range(PARTITIONS)}
    publish(LoadProfile(tuple(PartitionLoad(topic, p, w) for p, w in weights.items())),
            cluster.bootstrap, profile_topic)  # the pipeline's side: the plain listener
    monkeypatch.setenv("KA_TEST_PROFILE_TOPIC", profile_topic)
    spec = "integration_tests.new_assignor_configs:LOAD_AWARE_PROFILE_TOPIC"
    with GroupRunner(bootstrap, unique_name("group"), [topic], [spec], members=2,
                     consumer_config=dict(SECURITY), **MEMBER) as group:
        state = group.wait_stable(timeout=90, expected={topic: PARTITIONS})
        text = logs(group)
    assert f"from load profile topic '{profile_topic}'" in text, text[-6000:]
    assert "weight source" not in text, text[-6000:]
    hot_per_member = sorted(sum(1 for _t, p in tps if p in HOT) for tps in state.values())
    assert hot_per_member == [1, 1], state
