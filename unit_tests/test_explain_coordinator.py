"""explain asks again while a group's coordinator moves or loads (both group protocols)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from kafka.protocol.metadata import CoordinatorType

from kafka_assignors.explain import consumer_group_api, fetch
from kafka_assignors.explain.fetch import ExplainError, fetch_group

NOT_COORDINATOR = {"error": "[Error 16] NotCoordinatorError: "}
NOT_FOUND = {"error": "[Error 69] GroupIdNotFoundError: "}
STABLE: dict[str, object] = {"group_state": "Stable", "protocol_type": "consumer", "error": None,
                             "members": []}
CONSUMER_VIEW = {"group_id": "g", "error_code": 0, "error_message": None,
                 "group_state": "Stable", "group_epoch": 3, "assignment_epoch": 3,
                 "assignor": "uniform", "members": []}


class _Admin:
    """kafka-python's admin as fetch_group uses it; DescribeGroups answers in turn."""

    def __init__(self, answers: list[dict[str, Any]]) -> None:
        self.answers = answers
        self.calls = 0
        self.lookups = 0
        self.coordinators: dict[Any, Any] = {}
        self._manager = SimpleNamespace(cluster=SimpleNamespace(_coordinators=self.coordinators))

    def describe_groups(self, ids: list[str]) -> dict[str, object]:
        self.calls += 1
        key = (CoordinatorType.GROUP, ids[0])
        if key not in self.coordinators:  # kafka-python looks the coordinator up, caches it
            self.lookups += 1
            self.coordinators[key] = 1
        return {ids[0]: self.answers[min(self.calls, len(self.answers)) - 1]}

    def list_group_offsets(self, spec: dict[str, object]) -> dict[str, object]:
        return {}


@pytest.fixture
def use_admin(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(fetch, "COORDINATOR_BACKOFF_S", 0.0)

    def use(admin: _Admin) -> None:
        @contextlib.contextmanager
        def fake(kwargs: object) -> Iterator[_Admin]:
            yield admin

        monkeypatch.setattr(fetch, "_admin", fake)

    return use


def test_a_classic_group_is_described_again_after_not_coordinator(use_admin: Any) -> None:
    admin = _Admin([NOT_COORDINATOR, NOT_COORDINATOR, STABLE])
    use_admin(admin)
    description, _, _ = fetch_group({}, "g")
    assert description["group_state"] == "Stable"
    assert admin.calls == admin.lookups == 3


def test_a_coordinator_that_keeps_moving_is_one_line(use_admin: Any) -> None:
    admin = _Admin([NOT_COORDINATOR])
    use_admin(admin)
    with pytest.raises(ExplainError) as caught:
        fetch_group({}, "g")
    assert admin.calls == fetch.COORDINATOR_ATTEMPTS
    assert "\n" not in str(caught.value)
    assert "NOT_COORDINATOR" in str(caught.value)
    assert admin.lookups == admin.calls  # each attempt asked for the coordinator again


def test_a_consumer_group_is_described_again_while_loading(
    use_admin: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    views = [{**CONSUMER_VIEW, "error_code": 14}, CONSUMER_VIEW]
    asked: list[str] = []

    def send_describe(admin: Any, group_id: str) -> int:
        asked.append(group_id)
        return len(asked)

    monkeypatch.setattr(consumer_group_api, "send_describe", send_describe)
    monkeypatch.setattr(consumer_group_api, "group_view", lambda answer, _: views[answer - 1])
    use_admin(_Admin([NOT_FOUND]))
    description, _, _ = fetch_group({}, "g")
    assert description["group_type"] == "consumer"
    assert asked == ["g", "g"]
