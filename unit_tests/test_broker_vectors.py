"""The broker-side assignor's test vectors are what the Python core computes now.

``broker-assignor/src/test/resources/vectors.json`` feeds the Java equivalence test; if the
core changes, this fails until the vectors are rewritten (``python broker-assignor/vectors.py``),
so the Java port cannot drift from the reference silently.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def _vectors() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "broker_vectors", ROOT / "broker-assignor" / "vectors.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_vectors_match_the_core() -> None:
    """Regenerating the vectors from the core gives the committed file, byte for byte."""
    vectors = _vectors()
    committed = vectors.OUT.read_text()
    fresh = vectors.render(vectors.cases())
    assert committed == fresh, "run: python broker-assignor/vectors.py (then mvn test)"


def test_vectors_cover_every_event_and_unequal_subscriptions() -> None:
    """Hundreds of cases: every kind of event, unequal subscriptions, static members, owned
    partitions that move."""
    cases = json.loads(_vectors().OUT.read_text())["cases"]
    assert len(cases) >= 300
    events = {c["name"].split("-", 2)[2] for c in cases}
    assert events == {"first", "join", "leave", "two-leave", "crash", "partitions", "resubscribe"}
    unequal = [c for c in cases if len({tuple(m["topics"]) for m in c["members"]}) > 1]
    assert len(unequal) >= 150
    assert any(m["instance_id"] for c in cases for m in c["members"])
    assert sum(c["expected"]["moved"] for c in cases) > 0
