"""confluent-kafka's own rules the bridge applies itself (librdkafka under the bridge is not
the group member, so it cannot apply them): no broker, no consumer."""

from __future__ import annotations

import json
import math
import struct

import pytest
from confluent_kafka import KafkaError, KafkaException

from kafka_assignors.confluent import translate_config
from kafka_assignors.confluent._errors import protocol_refusal
from kafka_assignors.confluent._group_metadata import serialized
from kafka_assignors.confluent._protocol_choice import given_config
from kafka_assignors.confluent._statistics import member_statistics, with_member

BASE = {"bootstrap.servers": "localhost:9092", "group.id": "g"}


@pytest.mark.parametrize("name", ["assign", "unassign"])
def test_cooperative_group_refuses_eager_calls_as_librdkafka(name: str) -> None:
    """assign()/unassign() in a cooperative group: _STATE, with Consumer.c's message and
    librdkafka's reason."""
    error = protocol_refusal(name, cooperative=True)
    assert isinstance(error, KafkaException)
    assert error.args[0].code() == KafkaError._STATE
    text = error.args[0].str()
    assert text.startswith("Failed to set assignment: Local: Erroneous state"
                           if name == "assign" else
                           "Failed to remove assignment: Local: Erroneous state")
    assert "incremental_assign() or incremental_unassign()" in text
    assert protocol_refusal(f"incremental_{name}", cooperative=True) is None


@pytest.mark.parametrize("name", ["incremental_assign", "incremental_unassign"])
def test_eager_group_refuses_incremental_calls_as_librdkafka(name: str) -> None:
    """incremental_* in an eager group: librdkafka's own _STATE message."""
    error = protocol_refusal(name, cooperative=False)
    assert error.args[0].code() == KafkaError._STATE
    assert error.args[0].str() == ("Changes to the current assignment must be made using "
                                   "assign() when rebalance protocol type is EAGER")
    assert protocol_refusal(name.removeprefix("incremental_"), cooperative=False) is None


def test_configuration_is_a_dict_keywords_or_both() -> None:
    """As confluent_kafka.Consumer: Consumer(conf), Consumer(**conf), keywords win."""
    assert given_config(None, BASE) == BASE
    assert given_config(BASE, {"group.id": "h"}) == {**BASE, "group.id": "h"}
    with pytest.raises(TypeError, match="expected configuration dict"):
        given_config(None, {})
    with pytest.raises(TypeError, match="expected configuration dict"):
        given_config(["bootstrap.servers"], {})  # type: ignore[arg-type]


def test_auto_commit_interval_zero_disables_periodic_commits() -> None:
    """librdkafka: 0 disables periodic commits (not: commit every millisecond)."""
    assert translate_config({**BASE, "auto.commit.interval.ms": 0}).auto_commit_interval_s \
        == math.inf
    assert translate_config({**BASE, "auto.commit.interval.ms": 250}).auto_commit_interval_s \
        == 0.25


@pytest.mark.parametrize("value", [-1, 86_400_001])
def test_auto_commit_interval_outside_librdkafkas_range_is_refused(value: int) -> None:
    """A value librdkafka refuses: its KafkaException(_INVALID_ARG), with its message."""
    with pytest.raises(KafkaException) as raised:
        translate_config({**BASE, "auto.commit.interval.ms": value})
    assert raised.value.args[0].code() == KafkaError._INVALID_ARG
    assert "outside allowed range 0..86400000" in str(raised.value.args[0].str())


def test_group_metadata_is_librdkafkas_serialized_form() -> None:
    """The member's identity in librdkafka's format v2, byte for byte as librdkafka writes
    it (the first: what confluent-kafka 2.16's consumer_group_metadata() returns for group
    ``g`` before any join, little-endian; the contract test compares it live)."""
    assert serialized("g", -1, "", None) == b"CGMDv2:\xff\xff\xff\xffg\x00\x00\x01"
    static = serialized("orders", 7, "member-1", "static-a")
    assert static == (b"CGMDv2:" + struct.pack("=i", 7) + b"orders\x00member-1\x00\x00"
                      b"static-a\x00")
    with pytest.raises(ValueError, match="printable"):
        serialized("grp\x01", 1, "m", None)


def test_statistics_show_the_members_group_figures() -> None:
    """stats_cb gets librdkafka's statistics with the member's cgrp figures, the rest
    unchanged; statistics without a cgrp section pass through as they are."""
    raw = json.dumps({"name": "c", "cgrp": {"state": "init", "join_state": "init",
                                            "rebalance_cnt": 0, "assignment_size": 0}})
    seen: list[str] = []
    member_statistics(lambda: (3, 2, True), seen.append)(raw)
    stats = json.loads(seen[0])
    assert stats["name"] == "c"
    assert stats["cgrp"] == {"state": "up", "join_state": "steady", "rebalance_cnt": 3,
                             "assignment_size": 2}
    plain = json.dumps({"name": "c"})
    member_statistics(lambda: None, seen.append)(raw)
    assert with_member(plain, rebalances=1, assigned=1, in_group=True) == plain
    assert seen[1] == raw
