"""The confluent bridge's configuration: one confluent-kafka dict split for three users."""

from __future__ import annotations

import ssl
from typing import Any

import pytest
from confluent_kafka import KafkaError
from kafka import errors as kp_errors
from kafka.coordinator.assignors.abstract import RebalanceProtocol
from kafka.coordinator.assignors.range import RangePartitionAssignor

from kafka_assignors import BalancedStickyAssignor, CooperativeBalancedStickyAssignor
from kafka_assignors.confluent import UnsupportedConfigError, translate_config
from kafka_assignors.confluent._errors import as_kafka_exception
from kafka_assignors.confluent._strategies import rebalance_protocol, resolve_strategies

BASE = {"bootstrap.servers": "b1:9092, b2:9092", "group.id": "g"}


def test_group_keys_go_to_the_membership_client_only() -> None:
    """Group-membership keys configure kafka-python and never reach librdkafka."""
    cfg = translate_config({
        **BASE,
        "group.instance.id": "i-1",
        "session.timeout.ms": "6000",
        "heartbeat.interval.ms": 500,
        "max.poll.interval.ms": 60000,
        "partition.assignment.strategy": "balanced-sticky",
    })
    assert cfg.membership["group_instance_id"] == "i-1"
    assert cfg.membership["session_timeout_ms"] == 6000
    assert cfg.membership["heartbeat_interval_ms"] == 500
    assert cfg.membership["max_poll_interval_ms"] == 60000
    assert cfg.strategy == "balanced-sticky"
    for key in ("group.instance.id", "session.timeout.ms", "heartbeat.interval.ms",
                "max.poll.interval.ms", "partition.assignment.strategy"):
        assert key not in cfg.confluent


def test_connection_keys_go_to_both_clients() -> None:
    """Bootstrap servers, group id, client id and rack reach librdkafka and kafka-python."""
    cfg = translate_config({**BASE, "client.id": "app", "client.rack": "r2",
                            "metadata.max.age.ms": "30000"})
    assert cfg.membership["bootstrap_servers"] == ["b1:9092", "b2:9092"]
    assert cfg.membership["group_id"] == "g"
    assert cfg.membership["client_id"] == "app"
    assert cfg.membership["metadata_max_age_ms"] == 30000
    assert cfg.client_rack == "r2"
    assert cfg.confluent["client.rack"] == "r2"  # librdkafka fetches from the nearest replica
    assert cfg.confluent["group.id"] == "g"
    assert cfg.confluent["bootstrap.servers"] == "b1:9092, b2:9092"


def test_unknown_keys_reach_librdkafka_unchanged() -> None:
    """Fetch, logging and other librdkafka keys are passed through as given."""
    cb = print
    cfg = translate_config({**BASE, "fetch.min.bytes": 1000, "auto.offset.reset": "earliest",
                            "stats_cb": cb, "isolation.level": "read_committed"})
    assert cfg.confluent["fetch.min.bytes"] == 1000
    assert cfg.confluent["auto.offset.reset"] == "earliest"
    assert cfg.confluent["stats_cb"] is cb
    assert cfg.confluent["isolation.level"] == "read_committed"


def test_commit_keys_are_handled_by_the_bridge() -> None:
    """librdkafka never commits (it is not the member); the bridge reads the commit settings."""
    done = []
    cfg = translate_config({**BASE, "enable.auto.commit": "false",
                            "auto.commit.interval.ms": 1500,
                            "enable.auto.offset.store": False,
                            "on_commit": lambda err, ps: done.append(err)})
    assert cfg.confluent["enable.auto.commit"] is False
    assert "auto.commit.interval.ms" not in cfg.confluent
    # librdkafka's own commits (manual assignment, no subscribe()) honour them
    assert cfg.confluent["enable.auto.offset.store"] is False
    assert cfg.confluent["on_commit"] is not None
    assert cfg.auto_commit is False
    assert cfg.auto_commit_interval_s == 1.5
    assert cfg.auto_offset_store is False
    assert cfg.on_commit is not None


def test_defaults_follow_librdkafka() -> None:
    """Without commit keys the bridge auto-commits every 5 s and stores offsets itself."""
    cfg = translate_config(dict(BASE))
    assert cfg.auto_commit and cfg.auto_offset_store
    assert cfg.auto_commit_interval_s == 5.0
    assert cfg.confluent["enable.auto.commit"] is False
    assert cfg.membership["allow_auto_create_topics"] is False
    assert cfg.strategy == "cooperative-balanced-sticky"
    assert cfg.membership["security_protocol"] == "PLAINTEXT"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"group.id": ""}, "group.id is required"),
        ({"group.protocol": "consumer"}, "classic"),
        ({"group.remote.assignor": "uniform"}, "group.remote.assignor"),
        ({"session.timeout.ms": "soon"}, "expected an integer"),
        ({"enable.auto.commit": "maybe"}, "expected true or false"),
        ({"on_commit": 42}, "on_commit must be callable"),
        ({"metadata.broker.list": "x:1"}, "given twice"),
    ],
)
def test_bad_config_is_refused_with_the_reason(extra: dict[str, Any], message: str) -> None:
    """Keys the bridge cannot honour fail at construction, naming the problem."""
    with pytest.raises(UnsupportedConfigError, match=message):
        translate_config({**BASE, **extra})


def test_metadata_broker_list_is_an_alias() -> None:
    """librdkafka's old name for bootstrap.servers works too."""
    cfg = translate_config({"metadata.broker.list": "h:1", "group.id": "g"})
    assert cfg.membership["bootstrap_servers"] == ["h:1"]


# --- security -----------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["plaintext", "ssl", "SASL_PLAINTEXT", "sasl_ssl"])
def test_membership_client_uses_the_same_security_protocol(protocol: str) -> None:
    """The membership connection is never weaker than the one configured for librdkafka."""
    conf: dict[str, Any] = {**BASE, "security.protocol": protocol}
    if protocol.upper().startswith("SASL"):
        conf.update({"sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "u",
                     "sasl.password": "p"})
    cfg = translate_config(conf)
    assert cfg.membership["security_protocol"] == protocol.upper()
    assert ("ssl_context" in cfg.membership) == protocol.upper().endswith("SSL")
    assert cfg.confluent["security.protocol"] == protocol  # librdkafka gets it unchanged


def test_sasl_credentials_are_translated() -> None:
    """SASL mechanism, user name and password reach kafka-python."""
    cfg = translate_config({**BASE, "security.protocol": "SASL_SSL", "sasl.mechanisms": "PLAIN",
                            "sasl.username": "alice", "sasl.password": "secret"})
    assert cfg.membership["sasl_mechanism"] == "PLAIN"
    assert cfg.membership["sasl_plain_username"] == "alice"
    assert cfg.membership["sasl_plain_password"] == "secret"


def test_sasl_defaults_to_gssapi_like_librdkafka() -> None:
    """Without a mechanism librdkafka uses GSSAPI; so does the membership client."""
    cfg = translate_config({**BASE, "security.protocol": "SASL_PLAINTEXT",
                            "sasl.kerberos.service.name": "kfk"})
    assert cfg.membership["sasl_mechanism"] == "GSSAPI"
    assert cfg.membership["sasl_kerberos_service_name"] == "kfk"


def test_tls_verifies_the_broker_by_default() -> None:
    """Certificate and host name checks are on unless switched off explicitly."""
    ctx = translate_config({**BASE, "security.protocol": "SSL"}).membership["ssl_context"]
    assert isinstance(ctx, ssl.SSLContext)
    assert ctx.verify_mode == ssl.CERT_REQUIRED
    assert ctx.check_hostname is True
    assert ctx.minimum_version >= ssl.TLSVersion.TLSv1_2


def test_tls_checks_are_only_as_relaxed_as_configured() -> None:
    """Switching off the host name check keeps certificate verification; both off is CERT_NONE."""
    no_host = translate_config({**BASE, "security.protocol": "SSL",
                                "ssl.endpoint.identification.algorithm": "none"})
    ctx = no_host.membership["ssl_context"]
    assert (ctx.check_hostname, ctx.verify_mode) == (False, ssl.CERT_REQUIRED)
    no_verify = translate_config({**BASE, "security.protocol": "SSL",
                                  "enable.ssl.certificate.verification": "false"})
    ctx = no_verify.membership["ssl_context"]
    assert (ctx.check_hostname, ctx.verify_mode) == (False, ssl.CERT_NONE)


def test_tls_cipher_suites_are_applied() -> None:
    """A restricted cipher list restricts the membership client too."""
    ctx = translate_config({**BASE, "security.protocol": "SSL",
                            "ssl.cipher.suites": "ECDHE-RSA-AES256-GCM-SHA384"})
    names = {c["name"] for c in ctx.membership["ssl_context"].get_ciphers()}
    assert "ECDHE-RSA-AES256-GCM-SHA384" in names
    assert "ECDHE-RSA-AES128-GCM-SHA256" not in names


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"security.protocol": "SSL", "ssl.keystore.location": "/k.p12"}, "ssl.keystore.location"),
        ({"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER"}, "OAUTHBEARER"),
        ({"security.protocol": "SASL_SSL", "sasl.oauthbearer.config": "x"}, "sasl.oauthbearer"),
        ({"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN"}, "sasl.username"),
        ({"security.protocol": "SSL", "ssl.ca.location": "/no/such/ca.pem"}, "ssl.ca.location"),
        ({"security.protocol": "SSL", "ssl.certificate.location": "/c.pem"}, "together"),
        ({"sasl.username": "u", "sasl.password": "p"}, "security.protocol is PLAINTEXT"),
        ({"security.protocol": "kerberos"}, "security.protocol"),
    ],
)
def test_security_settings_that_cannot_be_reproduced_are_refused(
    extra: dict[str, Any], message: str
) -> None:
    """A security key is never dropped silently: the bridge refuses to start instead."""
    with pytest.raises(UnsupportedConfigError, match=message):
        translate_config({**BASE, **extra})


# --- strategies ---------------------------------------------------------------------------


def test_wire_names_resolve_to_our_assignors_with_the_rack() -> None:
    """A comma-separated list of wire names gives fresh instances, in order, with client.rack."""
    got = resolve_strategies("cooperative-balanced-sticky, balanced-sticky", client_rack="r1")
    assert [type(a) for a in got] == [CooperativeBalancedStickyAssignor, BalancedStickyAssignor]
    assert all(a.client_rack == "r1" for a in got)


def test_instances_classes_and_kafka_python_names_are_accepted() -> None:
    """Instances are used as given (their last_report stays readable); classes are built."""
    mine = BalancedStickyAssignor()
    got = resolve_strategies([mine, CooperativeBalancedStickyAssignor, "range"])
    assert got[0] is mine
    assert isinstance(got[1], CooperativeBalancedStickyAssignor)
    assert isinstance(got[2], RangePartitionAssignor)
    by_path = resolve_strategies("kafka_assignors:BalancedStickyAssignor")
    assert isinstance(by_path[0], BalancedStickyAssignor)


def test_every_registered_wire_name_resolves() -> None:
    """Every assignor the project registers works as a bridge strategy."""
    from kafka_assignors.simulator.registry import assignor_names

    for name in assignor_names():
        assert resolve_strategies(name)[0].name == name


@pytest.mark.parametrize(
    ("value", "message"),
    [("sticky-ish", "unknown assignor 'sticky-ish'"), ([], "empty"),
     ("range,range", "twice"), ([object()], "neither a wire name")],
)
def test_bad_strategies_are_refused(value: Any, message: str) -> None:
    """Unknown names list the known ones; other mistakes say what is wrong."""
    with pytest.raises(UnsupportedConfigError, match=message):
        resolve_strategies(value)


def test_rebalance_protocol_is_the_best_one_all_assignors_share() -> None:
    """Cooperative only when every listed assignor supports it (as kafka-python decides)."""
    coop = CooperativeBalancedStickyAssignor()
    assert rebalance_protocol([coop]) == RebalanceProtocol.COOPERATIVE
    assert rebalance_protocol([BalancedStickyAssignor()]) == RebalanceProtocol.EAGER
    assert rebalance_protocol([coop, RangePartitionAssignor()]) == RebalanceProtocol.EAGER


# --- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (kp_errors.RebalanceInProgressError(), KafkaError.REBALANCE_IN_PROGRESS),
        (kp_errors.IllegalGenerationError(), KafkaError.ILLEGAL_GENERATION),
        (kp_errors.KafkaTimeoutError(), KafkaError._TIMED_OUT),
        (kp_errors.CommitFailedError(), KafkaError.ILLEGAL_GENERATION),
        (RuntimeError("x"), KafkaError._FAIL),
    ],
)
def test_kafka_python_errors_become_confluent_errors(exc: BaseException, code: int) -> None:
    """Errors surface as confluent_kafka.KafkaException with the matching Kafka error code."""
    err = as_kafka_exception(exc).args[0]
    assert err.code() == code
    assert type(exc).__name__ in err.str()
