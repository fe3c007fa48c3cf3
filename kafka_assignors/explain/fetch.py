"""Read one group's description, committed offsets and log end offsets from the cluster.

Every call is bounded by the admin client's timeouts; failures become
:class:`ExplainError` with a one-line reason (unknown group, unreachable
cluster, missing authorization).
"""

from __future__ import annotations

import contextlib
import logging
import re
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

from .model import Partition

log = logging.getLogger(__name__)

T = TypeVar("T")


class ExplainError(RuntimeError):
    """Why a group cannot be explained, in one line."""


@contextlib.contextmanager
def _admin(kwargs: Mapping[str, Any]) -> Iterator[Any]:
    from kafka import KafkaAdminClient
    from kafka.errors import KafkaError, KafkaTimeoutError

    servers = ",".join(kwargs.get("bootstrap_servers", []))
    try:
        client = KafkaAdminClient(**kwargs)
    except KafkaTimeoutError:
        seconds = int(kwargs.get("bootstrap_timeout_ms", 0)) / 1000
        raise ExplainError(
            f"cannot reach the cluster at {servers}: no broker answered within {seconds:g} s"
        ) from None
    except (KafkaError, OSError) as exc:
        raise ExplainError(f"cannot connect to {servers}: {_reason(exc)}") from None
    try:
        yield client
    finally:
        with contextlib.suppress(Exception):
            client.close()


#: What each authorization error means the principal lacks.
_NEEDS = {
    "GroupAuthorizationFailedError": "Describe on the group",
    "TopicAuthorizationFailedError": "Describe on the group's topics",
    "ClusterAuthorizationFailedError": "Describe on the cluster",
}
#: Kafka error codes of the three (DescribeGroups / Metadata answers carry codes).
AUTHORIZATION_CODES = {
    29: "TopicAuthorizationFailedError",
    30: "GroupAuthorizationFailedError",
    31: "ClusterAuthorizationFailedError",
}

#: The error code of an unknown group (and, to ConsumerGroupDescribe, of a classic one).
GROUP_ID_NOT_FOUND = 69

#: Answers that pass: the group moved to another coordinator, or its new one is loading it.
COORDINATOR_CODES = {14: "COORDINATOR_LOAD_IN_PROGRESS", 16: "NOT_COORDINATOR"}
#: Describe calls before giving up on them, and the pause before the second (then doubled).
COORDINATOR_ATTEMPTS = 4
COORDINATOR_BACKOFF_S = 0.5


def _not_authorized(name: str) -> str:
    needs = _NEEDS.get(name, "Describe on the group and its topics")
    return f"not authorized ({name}): the principal needs {needs}"


def _error_name(text: str) -> str | None:
    """'[Error 30] GroupAuthorizationFailedError: ...' -> 'GroupAuthorizationFailedError'."""
    match = re.search(r"\b(\w+Error)\b", text)
    return match.group(1) if match else None


def _reason(exc: BaseException) -> str:
    name = type(exc).__name__
    if "Authorization" in name:
        return _not_authorized(name)
    if "Authentication" in name or "SaslAuthentication" in name:
        return f"authentication failed ({name}): check the SASL/SSL settings"
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{name}: {text}" if text and text != name else name


def fetch_group(
    kwargs: Mapping[str, Any], group_id: str
) -> tuple[dict[str, Any], dict[Partition, int], dict[Partition, int]]:
    """(description, committed offsets, log end offsets) of ``group_id``."""
    from kafka import TopicPartition
    from kafka.errors import KafkaError
    from kafka.protocol.consumer.offsets import OffsetSpec

    with _admin(kwargs) as admin:
        try:
            description = _asking_the_coordinator(
                admin, group_id, lambda: admin.describe_groups([group_id]).get(group_id),
                _classic_code,
            )
            if description is None:
                raise ExplainError(f"group {group_id!r}: no answer from its coordinator")
            error = description.get("error")
            code = description.get("error_code")
            if not error and isinstance(code, int) and code:
                error = AUTHORIZATION_CODES.get(code, f"error code {code}")
            if error and "GroupIdNotFound" in str(error):
                # a consumer-protocol group is "not a classic group" to DescribeGroups
                description = _consumer_group(admin, group_id)
                error = None
            if error and "Authorization" in str(error):
                name = _error_name(str(error)) or "GroupAuthorizationFailedError"
                raise ExplainError(f"group {group_id!r}: {_not_authorized(name)}")
            if error:
                raise ExplainError(f"group {group_id!r}: {str(error).splitlines()[0]}")
            offsets = admin.list_group_offsets({group_id: None}).get(group_id, {})
            committed = {(tp.topic, tp.partition): int(om.offset) for tp, om in offsets.items()}
            if description.get("group_state") == "Dead" and not committed:
                raise ExplainError(f"unknown group {group_id!r} (no members, no committed offsets)")
            topics = {t for t, _ in committed}
            if description.get("group_type") == "consumer":
                from .consumer_group_api import topics_of

                topics.update(topics_of(description))
            for member in description.get("members") or ():
                meta = member.get("member_metadata")
                topics.update(str(t) for t in (getattr(meta, "topics", None) or ()))
            counts = _partition_counts(admin, sorted(topics))
            specs = {
                TopicPartition(t, p): OffsetSpec.LATEST for t, n in counts.items() for p in range(n)
            }
            ends = admin.list_partition_offsets(specs) if specs else {}
        except ExplainError:
            raise
        except (KafkaError, OSError) as exc:
            raise ExplainError(f"group {group_id!r}: {_reason(exc)}") from None
        except Exception as exc:
            if "Authorization" not in type(exc).__name__ + str(exc):
                raise
            name = _error_name(f"{type(exc).__name__} {exc}") or type(exc).__name__
            raise ExplainError(f"group {group_id!r}: {_not_authorized(name)}") from None
    end_offsets = {(tp.topic, tp.partition): int(o.offset) for tp, o in ends.items()}
    return dict(description), committed, end_offsets


def _consumer_group(admin: Any, group_id: str) -> dict[str, Any]:
    """The ConsumerGroupDescribe view of a KIP-848 group (raises ExplainError)."""
    from kafka.errors import IncompatibleBrokerVersion

    from .consumer_group_api import group_view, send_describe  # kafka-python: only when used

    try:
        view = _asking_the_coordinator(
            admin, group_id, lambda: group_view(send_describe(admin, group_id), group_id),
            lambda answer: int(answer.get("error_code") or 0),
        )
    except IncompatibleBrokerVersion:  # before Kafka 4.0 there are only classic groups
        raise ExplainError(
            f"unknown group {group_id!r} (the coordinator does not know it)"
        ) from None
    code = int(view.get("error_code") or 0)
    if code == GROUP_ID_NOT_FOUND:
        raise ExplainError(f"unknown group {group_id!r} (the coordinator does not know it)")
    if code in AUTHORIZATION_CODES:
        raise ExplainError(f"group {group_id!r}: {_not_authorized(AUTHORIZATION_CODES[code])}")
    if code:
        reason = view.get("error_message") or f"error code {code}"
        raise ExplainError(f"group {group_id!r}: ConsumerGroupDescribe failed: {reason}")
    return {"group_type": "consumer", **view}


def _classic_code(description: Mapping[str, Any] | None) -> int:
    """The error code of a DescribeGroups entry (kafka-python puts it in the error text)."""
    if description is None:
        return 0
    code = description.get("error_code")
    if isinstance(code, int):
        return code
    match = re.match(r"\[Error (-?\d+)\]", str(description.get("error") or ""))
    return int(match.group(1)) if match else 0


def _asking_the_coordinator(
    admin: Any, group_id: str, describe: Callable[[], T], code_of: Callable[[T], int]
) -> T:
    """``describe()``, again after a fresh coordinator lookup while the answer is one of
    ``COORDINATOR_CODES``: a few bounded attempts, then ExplainError."""
    pause = COORDINATOR_BACKOFF_S
    for attempt in range(1, COORDINATOR_ATTEMPTS + 1):
        answer = describe()
        code = code_of(answer)
        if code not in COORDINATOR_CODES:
            return answer
        if attempt < COORDINATOR_ATTEMPTS:
            log.debug("group %s: %s, asking again", group_id, COORDINATOR_CODES[code])
            _forget_coordinator(admin, group_id)
            time.sleep(pause)
            pause *= 2
    raise ExplainError(
        f"group {group_id!r}: its coordinator answered {COORDINATOR_CODES[code]} "
        f"{COORDINATOR_ATTEMPTS} times (the group is moving or loading): try again"
    )


def _forget_coordinator(admin: Any, group_id: str) -> None:
    """Make the next call look the coordinator up again: kafka-python keeps it cached for
    the client's life (``ClusterMetadata._coordinators``) and has no call to drop it."""
    from kafka.protocol.metadata import CoordinatorType

    cluster = getattr(getattr(admin, "_manager", None), "cluster", None)
    cache = getattr(cluster, "_coordinators", None)
    if isinstance(cache, dict):
        cache.pop((CoordinatorType.GROUP, group_id), None)


def _partition_counts(admin: Any, topics: list[str]) -> dict[str, int]:
    if not topics:
        return {}
    counts: dict[str, int] = {}
    for info in admin.describe_topics(topics):
        code = info.get("error_code", 0)
        if code in AUTHORIZATION_CODES:
            raise ExplainError(
                f"topic {info.get('name')}: {_not_authorized(AUTHORIZATION_CODES[code])}"
            )
        if code == 0 and info.get("partitions"):
            counts[str(info["name"])] = len(info["partitions"])
        else:
            log.warning("topic %s: not described (%s)", info.get("name"), info.get("error_code"))
    return counts
