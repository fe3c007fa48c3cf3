"""Assignor instances for member processes ("integration_tests.new_assignor_configs:NAME").

Member processes build their consumer from strategy specs, so per-member
settings (a rack, pins, an explicit lag connection) live here.  Values that are
only known at run time come from environment variables the test sets before it
starts the member (the member inherits the test's environment).
"""

from __future__ import annotations

import os
import time

from kafka_assignors import (
    CooperativeRackAwareAssignor,
    LiveLag,
    LoadAwareAssignor,
    PinnedAssignor,
    ProfileTopic,
    RackAwareAssignor,
    make_assignor,
)
from kafka_assignors.core.balanced_sticky import balanced_sticky
from kafka_assignors.core.model import Assignment, GroupSpec

RACK_R1 = RackAwareAssignor(client_rack="r1")
RACK_R2 = RackAwareAssignor(client_rack="r2")
RACK_R3 = RackAwareAssignor(client_rack="r3")

#: pins from KA_TEST_PINS, e.g. "orders:0,orders:1"
PINNED_FROM_ENV = PinnedAssignor(
    pinned=[p for p in os.environ.get("KA_TEST_PINS", "").split(",") if p]
)

#: live lag read with a deliberately wrong password on the SASL listener
LOAD_AWARE_WRONG_PASSWORD = LoadAwareAssignor(weights=LiveLag(timeout_s=5, consumer={
    "group_id": os.environ.get("KA_TEST_GROUP", ""),
    "connection": {
        "bootstrap_servers": os.environ.get("KA_TEST_SASL_BOOTSTRAP", ""),
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "PLAIN",
        "sasl_plain_username": "alice",
        "sasl_plain_password": "wrong-password",
    },
}))

COOP_RACK_R1 = CooperativeRackAwareAssignor(client_rack="r1")
COOP_RACK_R2 = CooperativeRackAwareAssignor(client_rack="r2")
COOP_RACK_R3 = CooperativeRackAwareAssignor(client_rack="r3")

#: weights from the load profile the test published to KA_TEST_PROFILE_TOPIC
LOAD_AWARE_PROFILE_TOPIC = LoadAwareAssignor(
    weights=ProfileTopic(os.environ.get("KA_TEST_PROFILE_TOPIC", "load-profile"))
)


def _slow_balanced(group: GroupSpec) -> Assignment:
    """balanced-sticky after a 3 s pause: a leader whose assignment spans several polls."""
    time.sleep(3)
    return balanced_sticky(group)


#: wire name "slow-balanced" (kafka-python's join hang: see test_kafka_python_runtime_live.py)
SLOW_BALANCED = make_assignor("slow-balanced", _slow_balanced)
#: the same, cooperative
SLOW_COOPERATIVE = make_assignor("slow-cooperative-balanced", _slow_balanced, cooperative=True)
