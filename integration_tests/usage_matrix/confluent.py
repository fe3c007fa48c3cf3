"""confluent-kafka's cells: our bridge beside plain confluent-kafka, used as confluent's docs do.

Ours: ``kafka_assignors.confluent.Consumer`` with ``balanced-sticky`` (eager) and
``cooperative-balanced-sticky``; alone: a plain ``confluent_kafka.Consumer`` (classic protocol)
with librdkafka's ``range`` and ``cooperative-sticky``. Both get the same config dict. The
member script is ``confluent_member.py`` beside this file; the mixed-group cell's bridged side
also runs kafka-python and aiokafka members with our assignor (``aiokafka_member.py``).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, cast

from .plans import HOLD_S, PLANS, Cell, Client, _leave, _settle, _since
from .workload import Side

#: what every member sets (both sides): read from the start, so that "lost" counts only
#: records the group skipped; a 10 s session and 1 s heartbeats on both clients
BASE_OPTIONS = {"auto.offset.reset": "earliest", "session.timeout.ms": 10000,
                "heartbeat.interval.ms": 1000}
HEARTBEAT_S = 1.0
#: processing longer than the session timeout, shorter than max poll (librdkafka wants
#: max.poll.interval.ms >= session.timeout.ms)
SLOW_SESSION = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 1000,
                "max.poll.interval.ms": 30000}
SLOW_BATCH_S = 8
MAX_POLL = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 1000,
            "max.poll.interval.ms": 10000}
SLOW_OVER_MAX_POLL_S = 14
NO_AUTO_COMMIT = {"enable.auto.commit": False}

CELLS = (
    Cell("poll", "`poll(1.0)` loop, auto-commit (default 5 s)", "poll", slack_s=HEARTBEAT_S),
    Cell("consume", "`consume(100, 1.0)` loop, auto-commit (default 5 s)", "consume",
         slack_s=HEARTBEAT_S),
    Cell("auto-commit-short", "`poll(1.0)` loop, auto-commit every 100 ms", "auto-commit",
         options={"auto.commit.interval.ms": 100}, slack_s=HEARTBEAT_S),
    Cell("store-offsets", "`store_offsets(msg)` after processing, "
         "`enable.auto.offset.store=false`", "store-offsets",
         options={"enable.auto.offset.store": False}, slack_s=HEARTBEAT_S),
    Cell("commit", "`enable.auto.commit=false`, `commit(asynchronous=False)` after every batch",
         "commit", options=NO_AUTO_COMMIT, slack_s=HEARTBEAT_S),
    Cell("commit-async", "`enable.auto.commit=false`, `commit(asynchronous=True)` after every "
         "batch, `commit()` before `close()`", "commit-async", options=NO_AUTO_COMMIT,
         slack_s=HEARTBEAT_S),
    Cell("revoke-commit", "`enable.auto.commit=false`, `commit(offsets)` in `on_revoke`",
         "revoke-commit", options=NO_AUTO_COMMIT, slack_s=HEARTBEAT_S),
    Cell("pattern", "`subscribe(['^prefix-.*'])`", "pattern", slack_s=HEARTBEAT_S),
    Cell("subscription-change", "`subscribe([a])`, then `subscribe([a, b])`", "consume",
         plan="subscription-change", topics=2, partitions=3, slack_s=HEARTBEAT_S),
    # static members are run with a session that outlasts a process restart (librdkafka's
    # default 45 s): with 10 s a restarted bridged process (kafka-python and the bridge to
    # import, a constructor that connects) sometimes came back too late on a loaded machine
    # and the broker expelled the old member
    Cell("static", "static membership (`group.instance.id`, `session.timeout.ms` 45 s), a "
         "member restarts", "consume", plan="static", options={"session.timeout.ms": 45000},
         slack_s=HEARTBEAT_S),
    Cell("slow-session", f"processing {SLOW_BATCH_S} s per batch > `session.timeout.ms` 6 s, "
         "< `max.poll.interval.ms` 30 s", "slow-session", options=SLOW_SESSION,
         extra={"batch_s": SLOW_BATCH_S}, slack_s=HEARTBEAT_S + SLOW_BATCH_S, bound_s=90.0,
         slow=True),
    Cell("slow-max-poll", f"one batch of {SLOW_OVER_MAX_POLL_S} s > `max.poll.interval.ms` "
         "10 s", "slow-max-poll", plan="slow-batch", options=MAX_POLL,
         extra={"slow_s": SLOW_OVER_MAX_POLL_S}, clean=False, slack_s=HEARTBEAT_S,
         bound_s=60.0, slow=True),
    Cell("pause-resume", "`pause()` everything 1.5 s of every 4 s, then `resume()`",
         "pause-resume", slack_s=HEARTBEAT_S + 1.5),
    Cell("seek", "`seek()` back to a failed message to retry it (every 25th, once)", "seek",
         slack_s=HEARTBEAT_S),
    Cell("close-during-rebalance", "`close()` while the group rebalances", "consume",
         plan="close-during-rebalance", slack_s=HEARTBEAT_S),
)
MIXED = Cell("mixed", "a bridged, a kafka-python and an aiokafka member (our assignor of the "
             "protocol; aiokafka's member is eager) form the group, the bridged one leaves",
             "consume", plan="mixed", slack_s=HEARTBEAT_S)


def mixed_group(side: Side, cell: Cell) -> None:
    """A bridged and a kafka-python member form the group, an aiokafka member joins, the bridged
    one leaves cleanly (on the alone side every member is plain confluent-kafka)."""
    want = set(side.partitions)
    side.start("m1", topics=side.topics)
    side.start("m2", topics=side.topics, kind="kafka-python")
    since = [_since(side, name, "subscribed", 60) for name in ("m1", "m2")]
    _settle(side, "formation", None if None in since else max(s for s in since if s), want,
            cell.bound_s)
    time.sleep(HOLD_S)
    side.start("m3", topics=side.topics, kind="aiokafka")
    _settle(side, "join", _since(side, "m3", "subscribed", 60), want, cell.bound_s)
    time.sleep(HOLD_S)
    _leave(side, cell, "m1", want)


PLANS.setdefault("mixed", mixed_group)


def describe() -> dict[str, Any]:
    import confluent_kafka
    import kafka

    return {"confluent-kafka": confluent_kafka.__version__,
            "librdkafka": confluent_kafka.libversion()[0], "kafka-python": kafka.__version__}


def client() -> Client:
    import confluent_kafka

    return Client(
        name="confluent-kafka",
        # a str at runtime; confluent-kafka's stubs type version() as (str, int)
        version=cast(str, confluent_kafka.__version__),
        script=Path(__file__).with_name("confluent_member.py"),
        strategies={
            "eager": (("bridge balanced-sticky", "bridge:balanced-sticky"),
                      ("confluent-kafka range", "plain:range")),
            "cooperative": (("bridge cooperative-balanced-sticky",
                             "bridge:cooperative-balanced-sticky"),
                            ("confluent-kafka cooperative-sticky", "plain:cooperative-sticky")),
        },
        cells=(*CELLS, MIXED),
        base_options=BASE_OPTIONS,
        describe=describe,
    )
