"""Sizing: max(Tt/Tp, Tt/Tc) partitions, consumers worth running, hot-key warnings (no Spark)."""

from __future__ import annotations

import pytest

from kafka_assignors.load.profile import LoadProfile, PartitionLoad
from kafka_assignors.pipeline.sizing import SizingError, describe, size, size_from_profile


def test_partitions_are_the_max_of_both_ratios_not_target_over_the_max() -> None:
    """Tt=100, Tp=20, Tc=10: 10 partitions (the source's Tt/max(Tp,Tc) would say 5)."""
    s = size(100, 20, 10, headroom=1.0)
    assert s.partitions_needed == 10 and s.partitions_recommended == 10
    assert s.consumers_worth_running == 10
    s = size(100, 10, 40, headroom=1.0)  # producer-bound: 10 partitions, 3 consumers suffice
    assert s.partitions_needed == 10 and s.consumers_worth_running == 3


def test_headroom_rounds_up_and_consumers_never_exceed_partitions() -> None:
    """1.5x headroom on 7 needed gives 11; consumers stop at the partition count."""
    s = size(70, 10, 10, headroom=1.5)
    assert (s.partitions_needed, s.partitions_recommended) == (7, 11)
    assert s.consumers_worth_running == 7
    assert size(1, 100, 0.001, headroom=1.0).consumers_worth_running == 1000


def test_exact_ratios_do_not_round_up_by_float_noise() -> None:
    """0.3/0.1 is 2.9999999999999996 or 3.0000000000000004 in floats; the answer is 3."""
    assert size(0.3, 0.1, 0.1, headroom=1.0).partitions_needed == 3


def test_producer_buffer_memory_follows_the_source() -> None:
    """10,000 partitions x 16 KiB batches is about 157 MB (156.25 MiB)."""
    s = size(10_000, 1, 1, headroom=1.0)
    assert s.producer_buffer_mib == pytest.approx(156.25)


@pytest.mark.parametrize("args", [(0, 1, 1), (1, -1, 1), (1, 1, float("nan"))])
def test_bad_inputs_are_refused(args: tuple[float, float, float]) -> None:
    """Non-positive or non-finite throughputs are errors."""
    with pytest.raises(SizingError):
        size(*args)


def profile() -> LoadProfile:
    def part(p: int, bps: float, share: float) -> PartitionLoad:
        return PartitionLoad(
            "orders",
            p,
            bps,
            {
                "bytes_per_s": bps,
                "messages_per_s": bps / 100,
                "hot_key": f"k{p}",
                "hot_key_share": share,
            },
        )

    return LoadProfile((part(0, 1000, 0.9), part(1, 200, 0.1), part(2, 300, 0.2)), "bytes_per_s")


def test_from_a_profile_the_target_is_measured_times_growth_and_hot_keys_are_flagged() -> None:
    """1,500 B/s measured x2 growth = 3,000; key k0 (900 B/s x2) exceeds Tc=1,000."""
    s = size_from_profile(profile(), 500, 1000, growth=2.0, headroom=1.0)
    assert s.target == 3000 and s.partitions_needed == 6 and s.unit == "bytes/s"
    assert s.hot_keys[0].key == "k0" and s.hot_keys[0].rate == pytest.approx(1800)
    assert any("'k0'" in w and "no partition count" in w for w in s.warnings)
    assert any("has 3 partitions; 6 are needed" in w for w in s.warnings)
    text = describe(s)
    assert "Partitions needed: 6" in text and "Warning" in text


def test_messages_metric_and_given_target() -> None:
    """The unit follows the metric; a given target overrides the measured one."""
    s = size_from_profile(profile(), 5, 10, metric="messages_per_s", target=40, headroom=1.0)
    assert s.unit == "messages/s" and s.partitions_needed == 8 and s.source == "given"
    assert not [w for w in s.warnings if "key" in w]
