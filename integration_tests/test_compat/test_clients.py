"""The bridge and adapter live tests on the oldest and newest client libraries allowed.

The oldest is pyproject.toml's ``>=`` bound, installed in a throwaway venv
(client_envs.py); the newest is the one in the project's .venv (bootstrap installs the
newest the range allows). Each test runs some of the suite's own tests, unchanged, in that
environment against the suite's broker, so their member processes import that version.
"""

from __future__ import annotations

import pytest

from ..conftest import BrokerHandle
from .client_envs import client_python, run_pytest
from .matrix import client_floor, compat, installed

BRIDGE = "integration_tests/test_confluent_bridge.py"
PROTOCOL = "integration_tests/test_consumer_protocol_live.py"
AIOKAFKA = "integration_tests/test_aiokafka_live.py"
AIOKAFKA_METRICS = ("integration_tests/test_metrics_aiokafka.py::"
                    "test_aiokafka_metrics_through_joins_a_crash_a_leave_and_a_subscription_change")


def versions(package: str) -> list[str]:
    """The oldest and the newest version of ``package`` the dependency range allows."""
    return sorted({client_floor(package), installed(package)}, key=_key)


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


# KIP-848 in librdkafka is GA from 2.12 (docs/broker-assignor.md), and the tests' view of a
# consumer-protocol group needs ConsumerGroupDescription.type, which 2.6.0 lacks
KIP848_CONFLUENT = [v for v in versions("confluent-kafka") if _key(v) >= (2, 12)]


def _run(package: str, version: str, broker: BrokerHandle, tests: list[str]) -> None:
    python = client_python(package, version)
    run = run_pytest(python, tests, broker.bootstrap)
    print(run.output[-600:])
    run.check(len(tests))


@compat("confluent-kafka", "eager")
@pytest.mark.parametrize("client_version", versions("confluent-kafka"))
def test_confluent_bridge_eager(client_version: str, kafka_broker: BrokerHandle) -> None:
    """Eager static members restart and scale in without duplicates on this confluent-kafka."""
    _run("confluent-kafka", client_version, kafka_broker,
         [f"{BRIDGE}::test_eager_static_members_restart_and_scale_in_without_duplicates"])


@compat("confluent-kafka", "cooperative")
@pytest.mark.parametrize("client_version", versions("confluent-kafka"))
def test_confluent_bridge_cooperative(client_version: str, kafka_broker: BrokerHandle) -> None:
    """A cooperative bridge group through a join, a clean leave and a crash loses nothing."""
    _run("confluent-kafka", client_version, kafka_broker,
         [f"{BRIDGE}::test_cooperative_group_through_join_clean_leave_and_crash"])


@compat("confluent-kafka", "KIP-848")
@pytest.mark.parametrize("client_version", KIP848_CONFLUENT)
def test_confluent_consumer_protocol(client_version: str, kafka_broker: BrokerHandle) -> None:
    """The bridge's consumer-protocol group on the broker's balanced-sticky, and the error
    for an assignor the broker lacks, on this confluent-kafka."""
    _run("confluent-kafka", client_version, kafka_broker,
         [f"{PROTOCOL}::test_bridge_consumer_protocol_group_on_balanced_sticky",
          f"{PROTOCOL}::test_an_unknown_remote_assignor_names_the_brokers_assignors"])


@compat("aiokafka", "eager")
@pytest.mark.parametrize("client_version", versions("aiokafka"))
def test_aiokafka_mixed_group(client_version: str, kafka_broker: BrokerHandle) -> None:
    """aiokafka and kafka-python members share a group through a join, a leave and a crash,
    either one leading, and the rebalance metrics are right, on this aiokafka."""
    name = "test_mixed_group_through_join_leave_and_crash_stays_valid_balanced_and_sticky"
    _run("aiokafka", client_version, kafka_broker,
         [f"{AIOKAFKA}::{name}[aiokafka-leads]", f"{AIOKAFKA}::{name}[kafka-python-leads]",
          f"{AIOKAFKA_METRICS}[eager]", f"{AIOKAFKA_METRICS}[cooperative]"])
