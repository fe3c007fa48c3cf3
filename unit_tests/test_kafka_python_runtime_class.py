"""The runtime's coordinator class: one mixin per feature, composed in a fixed order, its
overrides in the manifest with their signatures, its workarounds probed (no broker needed)."""

from __future__ import annotations

import ast
import inspect
import itertools
import logging
import pydoc
from pathlib import Path
from typing import Any, cast

import pytest
from kafka import KafkaConsumer
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.coordinator.consumer import ConsumerCoordinator

from kafka_assignors import BalancedStickyAssignor, CooperativeBalancedStickyAssignor
from kafka_assignors.kafka_python import KafkaConsumer as RuntimeConsumer
from kafka_assignors.kafka_python.runtime import compose, manifest, probes

PACKAGE = Path(__file__).resolve().parents[1] / "kafka_assignors"
#: the modules of the runtime (and the entry points that reach into kafka-python for it)
RUNTIME_MODULES = [
    *sorted((PACKAGE / "kafka_python" / "runtime").glob("*.py")),
    PACKAGE / "kafka_python" / "consumer.py", PACKAGE / "kafka_python" / "fixes.py",
    PACKAGE / "metrics" / "__init__.py",
    # kafka-python-facing code outside the runtime (its names: features connection, racks)
    PACKAGE / "load" / "connection.py", PACKAGE / "kafka_python" / "racks.py"]
FEATURES = ("join_fix", "keep_reading", "fencing", "metrics")


def _consumer(strategy: Any, cls: Any = RuntimeConsumer, **config: Any) -> Any:
    return cls(bootstrap_servers="127.0.0.1:1", api_version=(3, 9), group_id="g",
               partition_assignment_strategy=[strategy], **config)


def _overrides() -> dict[str, set[str]]:
    """Mixin name -> the kafka-python coordinator methods it overrides."""
    return {m.__name__: {name for name, value in vars(m).items()
                         if callable(value) and not name.startswith("__")
                         and hasattr(ConsumerCoordinator, name)}
            for m in compose.order()}


@pytest.mark.parametrize("strategy", [CooperativeBalancedStickyAssignor, BalancedStickyAssignor])
def test_the_coordinator_is_the_runtimes_class_and_no_instance_attribute_shadows_a_method(
    strategy: Any,
) -> None:
    """type(consumer._coordinator) names the runtime's class; the state its mixins keep lives
    in attributes that are not the name of anything on the class."""
    consumer = _consumer(strategy)
    try:
        coordinator = consumer._coordinator
        assert type(coordinator).__name__ == "RuntimeCoordinator"
        assert isinstance(coordinator, ConsumerCoordinator)
        assert set(vars(coordinator)).isdisjoint(dir(type(coordinator)))
    finally:
        consumer.close()


def test_any_order_of_turning_features_on_gives_the_same_class() -> None:
    """Features turned on one by one, in every order, end in the one class of their set."""
    for size in range(1, len(FEATURES) + 1):
        for chosen in itertools.combinations(FEATURES, size):
            classes = set()
            for order in itertools.permutations(chosen):
                consumer = _consumer(RangePartitionAssignor, KafkaConsumer)
                try:
                    for feature in order:
                        if feature == "metrics":
                            from kafka_assignors.kafka_python.runtime import metrics

                            metrics.install(consumer._coordinator)
                        else:
                            compose.enable(consumer._coordinator, {feature})
                    classes.add(type(consumer._coordinator))
                finally:
                    consumer.close(autocommit=False)
            assert classes == {compose.coordinator_class(ConsumerCoordinator, chosen)}


def test_every_override_calls_super_and_says_what_it_works_around() -> None:
    """Each override's docstring is in help(); each mixin names the docs/upstream.md sections
    of the defects it works around; each override calls kafka-python's method (super())."""
    for mixin in compose.order():
        for name in _overrides()[mixin.__name__]:
            method = vars(mixin)[name]
            function = getattr(method, "__func__", method)
            assert function.__doc__, f"{mixin.__name__}.{name} has no docstring"
            source = inspect.getsource(function)
            assert "super()" in source or "super(" in source, f"{mixin.__name__}.{name}"
    text = pydoc.render_doc(compose.coordinator_class(ConsumerCoordinator, FEATURES),
                            renderer=cast(Any, pydoc).plaintext)
    for section in ("docs/upstream.md#1", "docs/upstream.md#2", "docs/upstream.md#3",
                    "docs/upstream.md#5", "docs/upstream.md#7"):
        assert section in text, section


def test_every_override_is_in_the_manifest_with_the_signature_kafka_python_has() -> None:
    """An override of a kafka-python method is listed with its parameters, and the installed
    kafka-python's method takes them."""
    listed = {n.name: n for n in manifest.NAMES if n.where == "ConsumerCoordinator"}
    for mixin, names in _overrides().items():
        for name in names:
            assert name in listed and listed[name].params is not None, f"{mixin}.{name}"
            why = manifest.signature_mismatch(getattr(ConsumerCoordinator, name),
                                              listed[name].params or (), method=True)
            assert why is None, f"{name}: {why}"


def test_a_changed_signature_is_reported() -> None:
    """A parameter kafka-python renames, drops or adds without a default is caught."""
    def poll(self: Any, timeout_ms: Any = None) -> None: ...

    def poll_required(self: Any, timeout_ms: Any, reason: Any) -> None: ...

    def prepare(self: Any, generation: Any, member_id: Any, timeout: Any = None) -> None: ...

    def grown(self: Any, *args: Any, **kwargs: Any) -> None: ...

    assert manifest.signature_mismatch(poll, ("timeout_ms",), method=True) is None
    assert manifest.signature_mismatch(grown, ("a", "b", "c="), method=True) is None
    assert "requires reason" in (manifest.signature_mismatch(
        poll_required, ("timeout_ms",), method=True) or "")
    assert "keyword timeout_ms" in (manifest.signature_mismatch(
        prepare, ("generation", "member_id", "timeout_ms="), method=True) or "")
    assert "not 2 arguments" in (manifest.signature_mismatch(
        poll, ("timeout_ms", "extra"), method=True) or "")


def _touched_private_names(path: Path) -> tuple[set[str], set[str]]:
    """(private attribute names a module reads or writes, names it defines itself)."""
    tree = ast.parse(path.read_text())
    touched: set[str] = set()
    own: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") \
                and not node.attr.startswith("__"):
            touched.add(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("getattr", "setattr", "hasattr") and len(node.args) > 1 \
                and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str) \
                and node.args[1].value.startswith("_") \
                and not node.args[1].value.startswith("__"):
            touched.add(node.args[1].value)
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        if any("Mixin" in ast.unparse(base) for base in cls.bases):
            continue  # a mixin's self.X = ... writes kafka-python's attributes
        for node in ast.walk(cls):  # our own state objects' attributes
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                    and isinstance(node.value, ast.Name) and node.value.id == "self":
                own.add(node.attr)
    for node in tree.body:  # module-level names (private helpers, constants)
        for target in getattr(node, "targets", [getattr(node, "target", None)]):
            if isinstance(target, ast.Name):
                own.add(target.id)
    return touched, own


def test_the_runtime_touches_no_kafka_python_private_name_the_manifest_lacks() -> None:
    """An AST scan of the runtime's modules: every private attribute they touch is one of
    ours (defined in these modules or in the package) or listed in the manifest."""
    touched: set[str] = set()
    own: set[str] = set()
    for path in RUNTIME_MODULES:
        found, defined = _touched_private_names(path)
        touched |= found
        own |= defined
    ours = {n for n in touched if n.startswith("_kafka_assignors")}
    unlisted = touched - own - ours - manifest.private_names()
    assert unlisted == set(), f"kafka-python private names missing from the manifest: {unlisted}"


def test_the_scan_finds_an_unlisted_private_name(tmp_path: Path) -> None:
    """The scan itself: a module reaching into an unlisted kafka-python attribute is caught."""
    module = tmp_path / "m.py"
    module.write_text("def f(coordinator):\n    return coordinator._heartbeat_thread\n")
    touched, own = _touched_private_names(module)
    assert "_heartbeat_thread" in touched - own - manifest.private_names()


def test_the_manifest_checks_the_config_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """CONFIG keys are checked: a key kafka-python no longer has is reported."""
    consumer = _consumer(RangePartitionAssignor, KafkaConsumer)
    try:
        assert manifest.missing(consumer._coordinator) == ()
        del consumer._coordinator.config["retry_backoff_ms"]
        assert "config.retry_backoff_ms" in manifest.missing(consumer._coordinator)
    finally:
        consumer.close()


def test_the_names_read_outside_the_runtime_are_checked(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    """The connection settings (load/connection.py) and racks (kafka_python/racks.py) read
    kafka-python names the manifest lists; a kafka-python without them gets an error that
    names them (logged once: the assignor then has no settings to give)."""
    from kafka_assignors.load import connection

    consumer = _consumer(RangePartitionAssignor, KafkaConsumer)
    coordinator = consumer._coordinator
    try:
        assert manifest.missing(coordinator, manifest.CONNECTION | manifest.RACKS) == ()
        assert connection.consumer_settings(coordinator)["group_id"] == "g"
        monkeypatch.setattr(connection, "_warned", False)
        monkeypatch.delattr(coordinator, "_manager")
        monkeypatch.delattr(coordinator, "_client")
        lacking = manifest.missing(coordinator, manifest.CONNECTION)
        assert {"ConsumerCoordinator._manager", "ConsumerCoordinator._client"} <= set(lacking)
        with caplog.at_level(logging.WARNING, logger="kafka_assignors"):
            for _ in range(2):
                with pytest.raises(AttributeError, match=r"ConsumerCoordinator\._manager"):
                    connection.consumer_settings(coordinator)
        assert len([r for r in caplog.records if "pass them explicitly" in r.getMessage()]) == 1
    finally:
        monkeypatch.undo()
        consumer.close()


def test_every_probe_reaches_a_verdict_on_this_kafka_python() -> None:
    """Each probe runs kafka-python's own code to the end (an inconclusive one would keep its
    workaround on silently)."""
    for key, workaround in probes.WORKAROUNDS.items():
        assert isinstance(workaround.probe(), bool), key


def test_a_fixed_defect_turns_its_workaround_off_with_one_info_line(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    """Where a probe finds kafka-python's own fix, workaround_needed says so, once logged;
    the override then gives kafka-python's answer (here: need_rejoin)."""
    monkeypatch.setattr(probes, "_verdicts", {})
    monkeypatch.setitem(probes.WORKAROUNDS, "drive-join-under-way", probes.Workaround(
        "drive-join-under-way", "need_rejoin() is False while a JoinGroup is out", "1",
        lambda: False))
    with caplog.at_level(logging.INFO, logger="kafka_assignors"):
        consumer = _consumer(BalancedStickyAssignor)  # the probes run here, once
    try:
        coordinator = consumer._coordinator
        coordinator.rejoin_needed, coordinator.rejoining = False, True
        with caplog.at_level(logging.INFO, logger="kafka_assignors"):
            assert coordinator.need_rejoin() is False  # kafka-python's own answer
            assert coordinator.need_rejoin() is False
        lines = [r for r in caplog.records
                 if "steps aside" in r.getMessage() and "section 1" in r.getMessage()]
        assert len(lines) == 1
    finally:
        consumer.close()


def test_an_inconclusive_probe_keeps_the_workaround(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> bool:
        raise AttributeError("kafka-python changed")

    monkeypatch.setattr(probes, "_verdicts", {})
    monkeypatch.setitem(probes.WORKAROUNDS, "replay-finished-join", probes.Workaround(
        "replay-finished-join", "x", "1", broken))
    assert probes.workaround_needed("replay-finished-join") is True


def test_a_coordinator_that_cannot_take_the_class_is_refused_cleanly() -> None:
    """A coordinator class whose layout differs (no common root with the mixins) is named
    in the error and left as it was."""

    class Slotted:
        __slots__ = ("group_id",)

    odd = Slotted()
    with pytest.raises(compose.IncompatibleCoordinatorError):
        compose.enable(odd, {"fencing"})
    assert type(odd) is Slotted
