"""explain's pure parts: client properties, user data decoding, lag and imbalance figures."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path

import pytest
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)

from kafka_assignors.explain.connection import (
    ConnectionConfigError,
    connection_kwargs,
    parse_properties,
    to_kwargs,
)
from kafka_assignors.explain.model import group_report, imbalance, lag_by_partition, user_data_view
from kafka_assignors.protocol.user_data import encode_user_data

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


def _ours(mid: str, parts: list[tuple[str, list[int]]], leader: str, generation: int) -> dict[
    str, object
]:
    """A member whose assignment user data is what our assignors wrote before 0.2 (leader,
    generation); explain still reads it from members of older versions."""
    member = _member(mid, ["t"], parts)
    member["member_assignment"] = ConsumerProtocolAssignment(
        0,
        parts,
        encode_user_data(
            {"assignor": "balanced-sticky", "leader": leader, "generation": generation}
        ),
    )
    return member


def test_leader_and_generation_come_from_our_assignment_user_data() -> None:
    """The leader is the member id every assignment names; the generation is the assignment's."""
    description = {
        "group_state": "Stable", "protocol_type": "consumer", "protocol_data": "balanced-sticky",
        "members": [_ours("a", [("t", [0])], "b", 8), _ours("b", [("t", [1])], "b", 8)],
    }
    report = group_report("g", description, {}, {("t", 0): 0, ("t", 1): 0})
    assert (report.leader, report.leader_source) == ("b", "assignment")
    # the subscriptions carry 7 (the generation of what they owned), the assignment says 8
    assert (report.generation, report.generation_source) == (8, "assignment")
    assert report.notes == []
    import io

    from kafka_assignors.explain import render_text

    out = io.StringIO()
    render_text(report, out)
    assert "leader     b (client-b) (from the assignment user data)" in out.getvalue()
    assert "generation 8 (as the leader wrote it in the assignment)" in out.getvalue()


def test_stale_or_disagreeing_assignment_user_data_is_noted() -> None:
    """Older-generation assignments and a leader no longer in the group are pointed out."""
    description = {
        "group_state": "CompletingRebalance", "protocol_type": "consumer",
        "members": [_ours("a", [("t", [0])], "x", 5), _ours("b", [("t", [1])], "a", 6)],
    }
    report = group_report("g", description, {}, {})
    assert (report.leader, report.generation) == ("a", 6)
    assert any("different generations (5, 6)" in n for n in report.notes)
    # subscriptions carry generation 7 > 6: the assignment is stale
    assert any("newer than the assignment's 6" in n for n in report.notes)
    gone = group_report(
        "g", {"protocol_type": "consumer", "members": [_ours("a", [], "zz", 9)]}, {}, {}
    )
    assert any("leader zz is no longer a member" in n for n in gone.notes)


def test_without_our_user_data_the_leader_is_not_reported() -> None:
    """Other assignors: leader None, generation from the subscriptions, as before."""
    description = {"protocol_type": "consumer", "members": [_member("a", ["t"], [("t", [0])])]}
    report = group_report("g", description, {}, {})
    assert (report.leader, report.leader_source) == (None, None)
    assert (report.generation, report.generation_source) == (7, "subscriptions")
    # a subscription's generation is the one the member held when it joined: the group's
    # is a later one, and the text says so
    import io

    from kafka_assignors.explain import render_text

    out = io.StringIO()
    render_text(report, out)
    assert "generation after 7 (members joined holding generation 7's assignment)" in (
        out.getvalue()
    )


class _FakeAdmin:
    """describe_groups / list_group_offsets / describe_topics answering like kafka-python."""

    def __init__(self, description: Mapping[str, object] | None = None,
                 raises: Exception | None = None, topic_code: int = 0) -> None:
        self.description = description or {}
        self.raises = raises
        self.topic_code = topic_code

    def describe_groups(self, ids: list[str]) -> dict[str, object]:
        if self.raises is not None:
            raise self.raises
        return {ids[0]: self.description}

    def list_group_offsets(self, spec: dict[str, object]) -> dict[str, object]:
        return {}

    def describe_topics(self, topics: list[str]) -> list[dict[str, object]]:
        return [{"name": t, "error_code": self.topic_code, "partitions": []} for t in topics]

    def list_partition_offsets(self, specs: dict[object, object]) -> dict[object, object]:
        return {}


def _auth_cases() -> list[object]:
    import kafka.errors as errors

    stable = {"group_state": "Stable", "protocol_type": "consumer", "error": None,
              "members": [_member("a", ["t"], [("t", [0])])]}
    return [
        pytest.param(_FakeAdmin({"error": "[Error 30] GroupAuthorizationFailedError: "}),
                     "GroupAuthorizationFailedError", id="group-error-in-answer"),
        pytest.param(_FakeAdmin(raises=errors.GroupAuthorizationFailedError()),
                     "GroupAuthorizationFailedError", id="group-raised"),
        pytest.param(_FakeAdmin(stable, topic_code=29), "TopicAuthorizationFailedError",
                     id="topic"),
        pytest.param(_FakeAdmin(raises=errors.ClusterAuthorizationFailedError()),
                     "ClusterAuthorizationFailedError", id="cluster"),
    ]


@pytest.mark.parametrize(("fake", "name"), _auth_cases())
def test_authorization_errors_are_one_friendly_line_and_exit_2(
    fake: _FakeAdmin, name: str, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Group, topic and cluster authorization failures: exit 2, one line naming what's missing."""
    import contextlib
    from collections.abc import Iterator

    from kafka_assignors.cli import main
    from kafka_assignors.explain import fetch

    @contextlib.contextmanager
    def fake_admin(kwargs: object) -> Iterator[_FakeAdmin]:
        yield fake

    monkeypatch.setattr(fetch, "_admin", fake_admin)
    code = main(["explain", "--bootstrap", "b:9092", "--group", "g"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.count("\n") == 0, err
    assert err.startswith("kafka-assignors explain: error: ")
    assert f"not authorized ({name}): the principal needs Describe on the" in err


def test_spark_gets_the_same_security_settings_as_java_properties(tmp_path: object) -> None:
    """SASL credentials become a JAAS line, PEM files Java's PEM stores, all kafka.-prefixed."""
    from pathlib import Path

    from kafka_assignors.explain.connection import java_properties, security_kwargs
    from kafka_assignors.pipeline.kafka_io import spark_options

    folder = Path(str(tmp_path))
    (folder / "client.pem").write_text("-----BEGIN CERTIFICATE-----\nMIIB\n")
    (folder / "client.key").write_text("-----BEGIN PRIVATE KEY-----\nMIIE\n")
    props = folder / "client.properties"
    props.write_text(
        "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"
        'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required '
        'username="alice" password="p\\"w";\n'
        "ssl.ca.location=/etc/ca.pem\nssl.endpoint.identification.algorithm=\n"
        "bootstrap.servers=ignored:9092\nfetch.min.bytes=1\n"
    )
    args = argparse.Namespace(
        command_config=str(props), security_protocol=None, sasl_mechanism=None,
        sasl_username=None, sasl_password=None, ssl_cafile=None,
        ssl_certfile=str(folder / "client.pem"), ssl_keyfile=str(folder / "client.key"),
        ssl_password="kp",
    )
    security, ignored = security_kwargs(args)
    assert ignored == ["fetch.min.bytes", "bootstrap_servers"]
    assert security == {
        "security_protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": "alice", "sasl_plain_password": 'p"w',
        "ssl_cafile": "/etc/ca.pem", "ssl_check_hostname": False,
        "ssl_certfile": str(folder / "client.pem"), "ssl_keyfile": str(folder / "client.key"),
        "ssl_password": "kp",
    }
    assert spark_options(security) == {
        "kafka.security.protocol": "SASL_SSL",
        "kafka.sasl.mechanism": "SCRAM-SHA-512",
        "kafka.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
        'required username="alice" password="p\\"w";',
        "kafka.ssl.truststore.type": "PEM",
        "kafka.ssl.truststore.location": "/etc/ca.pem",
        "kafka.ssl.keystore.type": "PEM",
        "kafka.ssl.keystore.certificate.chain": "-----BEGIN CERTIFICATE-----\nMIIB\n",
        "kafka.ssl.keystore.key": "-----BEGIN PRIVATE KEY-----\nMIIE\n",
        "kafka.ssl.key.password": "kp",
        "kafka.ssl.endpoint.identification.algorithm": "",
    }
    plain = java_properties({"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN",
                             "sasl_plain_username": "u", "sasl_plain_password": "p"})
    assert plain["sasl.jaas.config"] == (
        'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" '
        'password="p";'
    )
    assert spark_options(None) == {} and spark_options({}) == {}
    with pytest.raises(ConnectionConfigError, match="both the client certificate and its key"):
        java_properties({"ssl_certfile": "/c.pem"})


def test_pipeline_commands_take_the_security_options(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """profile and analyze parse explain's options; the kafka-python side gets the keywords."""
    from kafka_assignors.cli import build_parser
    from kafka_assignors.pipeline import options

    parser = build_parser()
    for command in ("profile", "analyze"):
        args = parser.parse_args([
            command, "--bootstrap", "b:9093", "--topic", "t", "--security-protocol",
            "SASL_PLAINTEXT", "--sasl-username", "u", "--sasl-password", "p",
        ])
        assert options.security(args) == {
            "security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN",
            "sasl_plain_username": "u", "sasl_plain_password": "p",
        }
    certfile = tmp_path / "c.pem"
    certfile.write_text("")
    bad = parser.parse_args(["profile", "--bootstrap", "b", "--topic", "t", "--ssl-certfile",
                             str(certfile)])
    with pytest.raises(SystemExit) as exit_info:
        options.security(bad)
    assert exit_info.value.code == 2
