"""explain's pure parts: client properties, user data decoding, lag and imbalance figures."""

from __future__ import annotations

import argparse

import pytest
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)

from kafka_assignors.adapters.user_data import encode_user_data
from kafka_assignors.explain.connection import (
    ConnectionConfigError,
    connection_kwargs,
    parse_properties,
    to_kwargs,
)
from kafka_assignors.explain.model import group_report, imbalance, lag_by_partition, user_data_view

PROPS = """
# Kafka tools' client.properties
bootstrap.servers = b1:9092,b2:9092
security.protocol=SASL_SSL
sasl.mechanism: SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\
    username="alice" password="s3\\"cret";
ssl.truststore.type=PEM
ssl.truststore.location=/etc/ca.pem
ssl.endpoint.identification.algorithm=
request.timeout.ms=5000
! another comment
fetch.min.bytes=1
"""


def test_properties_are_parsed_with_comments_separators_and_continuations() -> None:
    """Both '=' and ':' separate, comments are skipped and a trailing backslash continues."""
    props = parse_properties(PROPS)
    assert props["bootstrap.servers"] == "b1:9092,b2:9092"
    assert props["sasl.mechanism"] == "SCRAM-SHA-512"
    assert props["sasl.jaas.config"].endswith('password="s3\\"cret";')
    assert props["ssl.endpoint.identification.algorithm"] == ""


def test_java_properties_map_to_kafka_python_kwargs() -> None:
    """JAAS credentials, PEM truststore, hostname check and integer timeouts are carried over."""
    kwargs = to_kwargs(parse_properties(PROPS))
    assert kwargs["security_protocol"] == "SASL_SSL"
    assert kwargs["sasl_mechanism"] == "SCRAM-SHA-512"
    assert kwargs["sasl_plain_username"] == "alice"
    assert kwargs["sasl_plain_password"] == 's3"cret'
    assert kwargs["ssl_cafile"] == "/etc/ca.pem"
    assert kwargs["ssl_check_hostname"] is False
    assert kwargs["request_timeout_ms"] == 5000
    assert kwargs["_ignored"] == ["fetch.min.bytes"]


@pytest.mark.parametrize(
    "props",
    [
        {"ssl.truststore.location": "/etc/trust.jks"},
        {"ssl.keystore.location": "/etc/key.jks"},
        {"sasl.jaas.config": "com.sun.security.auth.module.Krb5LoginModule required;"},
        {"sasl.oauthbearer.token.endpoint.url": "https://idp"},
    ],
)
def test_security_settings_that_cannot_be_honoured_are_errors(props: dict[str, str]) -> None:
    """A security setting kafka-python cannot reproduce is refused, never silently dropped."""
    with pytest.raises(ConnectionConfigError):
        to_kwargs(props)


def test_options_override_the_properties_file(tmp_path: object) -> None:
    """Command-line options win over the file; SASL without a mechanism defaults to PLAIN."""
    from pathlib import Path

    path = Path(str(tmp_path)) / "client.properties"
    path.write_text("bootstrap.servers=file:9092\nsecurity.protocol=SASL_PLAINTEXT\n")
    args = argparse.Namespace(
        command_config=str(path),
        bootstrap="cli:9092",
        sasl_username="bob",
        timeout=2.0,
    )
    kwargs, ignored = connection_kwargs(args)
    assert kwargs["bootstrap_servers"] == ["cli:9092"]
    assert kwargs["sasl_mechanism"] == "PLAIN"
    assert kwargs["sasl_plain_username"] == "bob"
    assert kwargs["bootstrap_timeout_ms"] == 2000
    assert ignored == []


def test_user_data_of_ours_is_decoded_and_others_shown_as_truncated_hex() -> None:
    """kas1 JSON decodes (also from describe_groups' text form); foreign bytes become hex."""
    ours = encode_user_data({"mode": "cooperative"})
    assert user_data_view(ours) == {"decoded": {"mode": "cooperative"}}
    assert user_data_view(ours.decode()) == {"decoded": {"mode": "cooperative"}}
    foreign = bytes(range(200))
    view = user_data_view(foreign)
    assert view is not None and view["raw"].startswith("000102") and "(200 bytes)" in view["raw"]
    assert user_data_view(b"\x00\xff".decode(errors="backslashreplace")) == {"raw": "00ff"}
    assert user_data_view(b"") is None


def test_lag_is_end_minus_committed_and_none_without_a_commit() -> None:
    """Lag never goes negative and is None for a partition the group never committed."""
    lag = lag_by_partition({("t", 0): 5, ("t", 1): 12}, {("t", 0): 9, ("t", 1): 10, ("t", 2): 3})
    assert lag == {("t", 0): 4, ("t", 1): 0, ("t", 2): None}


def test_imbalance_figures() -> None:
    """Spread is max - min partitions, lag ratio heaviest/mean, idle members counted."""
    assert imbalance([3, 1, 0], [30, 0, 0]) == (3, 3.0, 1)
    assert imbalance([2, 2], [0, 0]) == (0, None, 0)
    assert imbalance([], []) == (0, None, 0)


def _member(mid: str, topics: list[str], parts: list[tuple[str, list[int]]]) -> dict[str, object]:
    sub = ConsumerProtocolSubscription.decode(
        ConsumerProtocolSubscription(
            version=3, topics=topics, user_data=encode_user_data({"mode": "eager"}),
            owned_partitions=[], generation_id=7, rack_id="r1",
        ).encode()
    )
    assignment = ConsumerProtocolAssignment(0, parts, b"\x01\x02")
    return {
        "member_id": mid, "client_id": f"client-{mid}", "client_host": "/10.0.0.1",
        "group_instance_id": None, "member_metadata": sub, "member_assignment": assignment,
    }


def test_group_report_from_a_decoded_description() -> None:
    """Members, assignment, rack, generation, lag and the unassigned partitions are reported."""
    description = {
        "group_state": "Stable", "protocol_type": "consumer", "protocol_data": "range",
        "members": [_member("a", ["t"], [("t", [0, 1])]), _member("b", ["t"], [])],
    }
    report = group_report(
        "g", description, {("t", 0): 1, ("t", 1): 2}, {("t", 0): 5, ("t", 1): 2, ("t", 2): 0}
    )
    a, b = report.members
    assert (a.client_id, a.host, a.rack, a.partitions, a.total_lag) == ("client-a", "10.0.0.1",
                                                                        "r1", 2, 4)
    assert a.assignment == {"t": [0, 1]} and a.lag == {"t-0": 4, "t-1": 0}
    assert a.subscription_user_data == {"decoded": {"mode": "eager"}}
    assert a.assignment_user_data == {"raw": "0102"}
    assert b.partitions == 0
    assert (report.strategy, report.generation, report.count_imbalance) == ("range", 7, 2)
    assert report.idle_members == 1 and report.unassigned == ["t-2"] and report.total_lag == 4
