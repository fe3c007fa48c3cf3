"""Sizing: max(Tt/Tp, Tt/Tc) partitions, consumers worth running, hot-key warnings (no Spark)."""

from __future__ import annotations

import pytest

from kafka_assignors.load.profile import LoadProfile, PartitionLoad
from kafka_assignors.pipeline.sizing import (
    ASSUMED,
    MEASURED,
    Origin,
    Sizing,
    SizingError,
    describe,
    human,
    rule_lines,
    size,
    size_from_profile,
)


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
    assert "target throughput (Tt): 3 kB/s (measured: the profile: 3 partitions" in text


def test_every_input_says_how_it_is_known() -> None:
    """Inputs come out in reading order with measured / given / assumed and the detail."""
    s = size_from_profile(
        profile(), 500, 1000, growth=2.0,
        origins={"producer": Origin(MEASURED, "timed"), "consumer": Origin(ASSUMED, "how")},
    )
    got = [(i.name.split(" (")[0], i.kind, i.detail) for i in s.inputs]
    assert got[:4] == [
        ("target throughput", "measured",
         "the profile: 3 partitions of orders carried 1.5 kB/s, times growth 2"),
        ("producer throughput per partition", "measured", "timed"),
        ("consumer throughput per partition", "assumed", "how"),
        ("growth", "given", ""),
    ]
    assert [i.name for i in s.inputs][4:] == ["headroom", "producer batch size"]
    assert Sizing.from_json(s.to_json()) == s


def test_several_topics_are_also_sized_one_by_one() -> None:
    """Two topics: the whole is sized for the group reading both, and each on its own."""
    two = LoadProfile(
        (*profile().partitions, PartitionLoad("pay", 0, 100, {"bytes_per_s": 100.0})),
        "bytes_per_s",
    )
    s = size_from_profile(two, 1000, 250, headroom=1.0)
    assert s.target == 1600 and s.partitions_needed == 7 and s.current_partitions is None
    assert [(t.topic, t.partitions_now, t.target, t.partitions_needed) for t in s.per_topic] == [
        ("orders", 3, 1500, 6), ("pay", 1, 100, 1)]


@pytest.mark.parametrize(
    ("value", "unit", "shown"),
    [(25312.7, "messages/s", "25,300 messages/s"), (0.8231, "messages/s", "0.823 messages/s"),
     (1.5e6, "bytes/s", "1.5 MB/s"), (999.0, "bytes/s", "999 B/s"), (1.5, "x", "1.5x")],
)
def test_numbers_are_rounded_for_people(value: float, unit: str, shown: str) -> None:
    """Three significant figures, thousands separators, no trailing zeros."""
    assert human(value, unit) == shown


def test_the_rule_is_written_with_the_numbers_put_in() -> None:
    """Tt=100, Tp=20, Tc=10 with 1.5x headroom: each step of the answer, computed."""
    lines = rule_lines(size(100, 20, 10))
    assert lines[0].endswith("ceil(max(100 / 20, 100 / 10)) = ceil(max(5, 10)) = 10")
    assert lines[1].endswith("ceil(10 x 1.5) = 15")
    assert lines[2].endswith("min(15, ceil(10)) = 10")
    assert lines[3].endswith("15 x 16 KiB = 240 KiB")
    # no thousands commas among the arguments: max(1500 / 1000, ...), not max(1,500 / 1,000)
    assert "ceil(max(1500 / 1000, 1500 / 400)) = ceil(max(1.5, 3.75)) = 4" in rule_lines(
        size(1500, 1000, 400))[0]


def test_messages_metric_and_given_target() -> None:
    """The unit follows the metric; a given target overrides the measured one."""
    s = size_from_profile(profile(), 5, 10, metric="messages_per_s", target=40, headroom=1.0)
    assert s.unit == "messages/s" and s.partitions_needed == 8 and s.source == "given"
    assert not [w for w in s.warnings if "key" in w]
