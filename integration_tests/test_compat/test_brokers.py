"""The live tests that matter for compatibility, on every Kafka version of the matrix.

Each test here runs one of the suite's own tests, unchanged, on a broker of
``broker_version`` (conftest.py): classic groups (eager and cooperative: strategy
negotiation, a range -> balanced-sticky rolling restart under traffic, static membership) on
3.9, the oldest and the newest 4.x; the broker-side assignor jar and the consumer-protocol
tests on every 4.x minor; the online classic -> consumer-protocol upgrade on the oldest and
newest 4.x.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kafka_assignors.embedded import GroupRunner

from .. import test_balanced_sticky_live as sticky_live
from .. import test_broker_assignor_live as jar_live
from .. import test_consumer_protocol_live as protocol_live
from ..conftest import BrokerHandle
from ..test_e2e import test_migration as migration
from ..test_e2e import test_negotiation as negotiation
from ..test_e2e import test_protocol_migration as online_upgrade
from ..test_e2e.test_protocol_migration import migrating_group  # noqa: F401 - a fixture
from .matrix import (
    BROKER,
    FULL_ONLY,
    KAFKA_CLASSIC,
    KAFKA_ONLINE_UPGRADE,
    KAFKA_PLUGIN,
    compat,
)

classic = pytest.mark.parametrize("broker_version", KAFKA_CLASSIC)
# static membership and the cooperative group on the oldest 4.x (whose group coordinator is
# 4.4's, where the suite runs them): full runs only, for make test's time
classic_3x = pytest.mark.parametrize("broker_version", [
    v if v.startswith("3.") else pytest.param(v, marks=FULL_ONLY) for v in KAFKA_CLASSIC])
plugin = pytest.mark.parametrize("broker_version", KAFKA_PLUGIN)
# the jar's long live test (a minute and more): on the oldest 4.x in make test, on the
# minors between in full runs only (make compat)
plugin_full = pytest.mark.parametrize("broker_version", [
    v if v in (KAFKA_PLUGIN[0], KAFKA_PLUGIN[-1]) else pytest.param(v, marks=FULL_ONLY)
    for v in KAFKA_PLUGIN])


@compat(BROKER, "eager")
@classic
def test_negotiation(broker_version: str, kafka_broker: BrokerHandle,
                     make_topic: Callable[..., str],
                     make_group: Callable[..., GroupRunner]) -> None:
    """Strategy vote, a refused member and a leader change behave the same on this broker."""
    negotiation.test_vote_refusal_and_leader_change_in_a_kafka_python_group(
        kafka_broker, make_topic, make_group)


@compat(BROKER, "eager")
@classic
def test_range_to_balanced_sticky_rolling_restart(
        broker_version: str, kafka_broker: BrokerHandle, make_topic: Callable[..., str],
        make_group: Callable[..., GroupRunner]) -> None:
    """The range -> balanced-sticky migration under traffic loses nothing on this broker."""
    migration.test_range_to_balanced_sticky_switches_when_the_last_range_only_member_leaves(
        kafka_broker, make_topic, make_group)


@compat(BROKER, "eager")
@classic_3x
def test_static_membership_and_sticky_eager_group(
        broker_version: str, kafka_broker: BrokerHandle, make_topic: Callable[..., str],
        make_group: Callable[..., GroupRunner]) -> None:
    """Joins, a leave, a crash, a static member's restart and a partition increase give the
    core's assignments on this broker, and the static restart causes no rebalance."""
    sticky_live.test_eager_group_through_join_leave_crash_static_restart_and_partition_increase(
        kafka_broker, make_topic, make_group)


@compat(BROKER, "cooperative")
@classic_3x
def test_cooperative_group(broker_version: str, kafka_broker: BrokerHandle,
                           make_topic: Callable[..., str],
                           make_group: Callable[..., GroupRunner]) -> None:
    """A cooperative group never double-owns nor interrupts kept partitions on this broker."""
    sticky_live.test_cooperative_group_never_double_owns_and_does_not_interrupt_kept_partitions(
        make_topic, make_group)


@compat(BROKER, "jar")
@plugin_full
def test_broker_assignor_matches_the_core(
        broker_version: str, kafka_broker: BrokerHandle, make_topic: Callable[..., str],
        unique_name: Callable[[str], str]) -> None:
    """The jar loads in this broker and assigns a KIP-848 group as the Python core does."""
    jar_live.test_balanced_sticky_on_the_broker_matches_the_core(
        kafka_broker, make_topic, unique_name)


@compat(BROKER, "jar")
@plugin
def test_bridge_consumer_protocol_group_on_the_jar(
        broker_version: str, kafka_broker: BrokerHandle, make_topic: Callable[..., str],
        unique_name: Callable[[str], str]) -> None:
    """The bridge's consumer-protocol group runs on the jar's balanced-sticky here."""
    protocol_live.test_bridge_consumer_protocol_group_on_balanced_sticky(
        kafka_broker, make_topic, unique_name)


@compat(BROKER, "KIP-848")
@plugin
def test_unknown_remote_assignor_is_named(
        broker_version: str, kafka_broker: BrokerHandle, make_topic: Callable[..., str],
        unique_name: Callable[[str], str]) -> None:
    """A remote assignor this broker lacks fails with the broker's assignors named."""
    protocol_live.test_an_unknown_remote_assignor_names_the_brokers_assignors(
        kafka_broker, make_topic, unique_name)


@compat(BROKER, "KIP-848")
@pytest.mark.parametrize("broker_version", KAFKA_ONLINE_UPGRADE)
def test_online_upgrade_to_the_consumer_protocol(
        broker_version: str, kafka_broker: BrokerHandle,
        migrating_group: online_upgrade.MigratingGroup,  # noqa: F811 - the imported fixture
) -> None:
    """The rolling classic -> consumer-protocol upgrade and back, under traffic, loses
    nothing on this broker."""
    online_upgrade.test_rolling_migration_to_the_consumer_protocol_and_back_under_traffic(
        kafka_broker, migrating_group, lambda line: print(f"\n{line}"))
