"""What an embedded group's member reports about itself, and how the runner reads it."""

from __future__ import annotations

import io
import json
from types import SimpleNamespace
from typing import Any

from kafka_assignors.embedded._member import Emitter, _Listener
from kafka_assignors.embedded.events import MemberConfig, MemberView


class _Consumer:
    """kafka-python's state at the moment it calls on_partitions_revoked while taking up a
    cooperative assignment: STABLE on the new generation, the old partitions still held, the
    rejoin not requested yet (it is requested once the revocation returns)."""

    def __init__(self) -> None:
        self._coordinator = SimpleNamespace(
            generation_if_stable=lambda: SimpleNamespace(protocol="cooperative-balanced-sticky"),
            need_rejoin=lambda: False,
        )

    def group_metadata(self) -> Any:
        return SimpleNamespace(generation_id=2, member_id="m1-x", state="<stable>")

    def assignment(self) -> list[Any]:
        return [SimpleNamespace(topic="t", partition=p) for p in range(5)]


def _view_after(callback: str, partitions: list[Any]) -> MemberView:
    out = io.StringIO()
    listener = _Listener(Emitter(out, "m1"))
    listener.consumer = _Consumer()
    getattr(listener, callback)(partitions)
    view = MemberView(0, "m1", MemberConfig("m1", "127.0.0.1:9092", "g", ("t",)))
    for line in out.getvalue().splitlines():
        view.apply(json.loads(line))
    return view


def test_a_revocation_reported_while_stable_is_not_a_settled_picture() -> None:
    view = _view_after("on_partitions_revoked", [SimpleNamespace(topic="t", partition=4)])
    assert view.state == "STABLE" and view.generation == 2
    assert view.rejoin_pending  # the runner's wait_stable does not take it as settled


def test_an_assignment_reported_while_stable_is_taken_as_it_is() -> None:
    view = _view_after("on_partitions_assigned", [SimpleNamespace(topic="t", partition=4)])
    assert view.state == "STABLE" and not view.rejoin_pending
