"""One coordinator class per set of features, put in place on an existing coordinator.

Each feature of the runtime is a mixin (:class:`RuntimeMixin`) whose methods override
kafka-python's ``ConsumerCoordinator`` methods and call ``super()``. For a set of features,
:func:`coordinator_class` composes the mixins once, in the fixed order of :func:`order`,
over the coordinator's own class (cached); :func:`enable` gives a coordinator the class for
its features plus the ones asked for (``coordinator.__class__ = ...``), after setting up the
state the new mixins keep. Turning features on in any order, at once or one by one, gives
the same class.
"""

from __future__ import annotations

import threading
import types
from abc import ABC
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar, cast

if TYPE_CHECKING:  # kafka-python has no types: the mixins see its coordinator as Any
    from kafka.coordinator.consumer import ConsumerCoordinator as _CoordinatorBase
else:
    # CPython lets an object take a subclass only if both classes' layouts grow from the same
    # root: kafka-python's BaseCoordinator derives from ABC (checked: check_layout)
    _CoordinatorBase = ABC


class RuntimeMixin(_CoordinatorBase):  # type: ignore[misc]
    """A feature of the runtime: overrides of ``ConsumerCoordinator`` methods.

    Subclasses set :attr:`FEATURE` and :attr:`TITLE`, and may define
    :meth:`kafka_assignors_setup` to create the per-coordinator state they keep (one instance
    attribute named ``_kafka_assignors_*``, never the name of a method).
    """

    FEATURE: ClassVar[str] = ""
    TITLE: ClassVar[str] = ""

    @classmethod
    def kafka_assignors_setup(cls, coordinator: Any) -> None:
        """Create this mixin's state on ``coordinator`` (before its class changes)."""


class IncompatibleCoordinatorError(TypeError):
    """The coordinator's class cannot take the runtime's subclass (its layout differs)."""


_lock = threading.RLock()
_classes: dict[tuple[type, frozenset[str]], type] = {}


def order() -> tuple[type[RuntimeMixin], ...]:
    """Every mixin, outermost first: the rejoin notice tells once every other mixin saw the
    mark; the metrics' pause timing sees what the consumer sees;
    the fenced check comes before any coordinator step; keep-reading drives the join fix; the
    join fix replays a round trip above the metrics' round-trip count (a replay is no second
    rebalance)."""
    from .cooperative import KeepReadingMixin
    from .fencing import FencedMemberMixin
    from .join import JoinFixMixin
    from .metrics import KeptPauseMixin, RebalanceEventsMixin
    from .notice import RejoinNoticeMixin

    return (RejoinNoticeMixin, KeptPauseMixin, FencedMemberMixin, KeepReadingMixin,
            JoinFixMixin, RebalanceEventsMixin)


def features_of(coordinator: Any) -> frozenset[str]:
    """The features ``coordinator``'s class has (empty for kafka-python's own class)."""
    found: frozenset[str] = getattr(type(coordinator), "_kafka_assignors_features", frozenset())
    return found


def base_class(coordinator: Any) -> type:
    """The class ``coordinator`` had before the runtime changed it."""
    found: type = getattr(type(coordinator), "_kafka_assignors_base", type(coordinator))
    return found


def coordinator_class(base: type, features: Iterable[str]) -> type:
    """``base`` with the mixins of ``features`` (the same class for the same set)."""
    wanted = frozenset(features)
    known = {m.FEATURE for m in order()}
    if wanted - known:
        raise ValueError(f"unknown runtime features: {sorted(wanted - known)}")
    with _lock:
        cls = _classes.get((base, wanted))
        if cls is None:
            mixins = tuple(m for m in order() if m.FEATURE in wanted)
            titles = list(dict.fromkeys(m.TITLE for m in mixins))
            namespace = {
                "__module__": __name__.rpartition(".")[0],
                "__doc__": _describe(base, mixins, titles),
                "_kafka_assignors_base": base,
                "_kafka_assignors_features": wanted,
            }
            # repr: <class '...runtime.RuntimeCoordinator[join fix, keep-reading]'>
            namespace["__qualname__"] = f"RuntimeCoordinator[{', '.join(titles)}]"
            cls = types.new_class("RuntimeCoordinator", (*mixins, base),
                                  exec_body=lambda ns: ns.update(namespace))
            _classes[(base, wanted)] = cls
        return cls


def _describe(base: type, mixins: tuple[type[RuntimeMixin], ...], titles: list[str]) -> str:
    """The composed class's docstring: every override, mixin by mixin, with its docstring
    (which names the upstream defect and its docs/upstream.md section)."""
    lines = [f"kafka-python's {base.__name__} with the kafka-assignors runtime's "
             f"{', '.join(titles)} (docs/runtime.md). Overrides, outermost first; each calls "
             "kafka-python's method (super()):", ""]
    for mixin in mixins:
        lines.append(f"{mixin.__name__}: {_paragraph(mixin.__doc__)}")
        lines.extend(f"  {name}: {' '.join((value.__doc__ or '').split())}"
                     for name, value in vars(mixin).items()
                     if callable(value) and not name.startswith("__") and hasattr(base, name))
    return "\n".join(lines)


def _paragraph(doc: str | None) -> str:
    return " ".join((doc or "").strip().split("\n\n")[0].split())


def enable(coordinator: Any, features: Iterable[str]) -> frozenset[str]:
    """Give ``coordinator`` the class of its current features plus ``features``; the features
    it has afterwards. Sets the new mixins' state up first, so a method called meanwhile on
    kafka-python's IO thread finds it. Raises :class:`IncompatibleCoordinatorError` (changing
    nothing) when the coordinator cannot take the class."""
    with _lock:
        current = features_of(coordinator)
        wanted = current | frozenset(features)
        if wanted == current:
            return current
        target = coordinator_class(base_class(coordinator), wanted)
        check_layout(coordinator, target)
        for mixin in reversed(target.__mro__):  # innermost first: outer ones read their state
            if (isinstance(mixin, type) and issubclass(mixin, RuntimeMixin)
                    and mixin.FEATURE in wanted - current
                    and "kafka_assignors_setup" in vars(mixin)):
                mixin.kafka_assignors_setup(coordinator)
        coordinator.__class__ = target
        return wanted


def check_layout(coordinator: Any, target: type) -> None:
    own = type(coordinator)
    if not hasattr(coordinator, "__dict__"):
        raise IncompatibleCoordinatorError(
            f"{own.__name__} keeps no per-instance __dict__ (__slots__): the runtime's state "
            "has nowhere to live")
    try:
        probe = cast(Any, own).__new__(own)  # no __init__: nothing runs
        probe.__class__ = target
    except Exception as exc:
        raise IncompatibleCoordinatorError(
            f"{own.__name__} cannot take the runtime's subclass ({exc}); the runtime's mixins "
            "grow from abc.ABC, as kafka-python 3's BaseCoordinator does") from exc
