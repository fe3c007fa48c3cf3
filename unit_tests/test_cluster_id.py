"""KRaft cluster ids the embedded cluster draws are valid for ``kafka-storage format``."""

from __future__ import annotations

import base64
import uuid
from typing import Any, cast

import pytest

from kafka_assignors.embedded import cluster


def test_a_cluster_id_never_starts_with_a_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    """An id starting with '-' is read as an option by kafka-storage: it is drawn again."""
    dash = uuid.UUID(bytes=base64.urlsafe_b64decode("-" + "A" * 21 + "=="))
    fine = uuid.UUID(int=1)
    draws = iter([dash, fine])
    # the uuid module as cluster imported it (not re-exported, hence the cast)
    monkeypatch.setattr(cast(Any, cluster).uuid, "uuid4", lambda: next(draws))
    cluster_id = cluster.new_cluster_id()
    assert not cluster_id.startswith("-")
    assert len(cluster_id) == 22
    assert base64.urlsafe_b64decode(cluster_id + "==") == fine.bytes
