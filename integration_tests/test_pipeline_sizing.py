"""sizing --measure: single-partition producer and consumer throughput on the real broker."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kafka_assignors.cli import main


def _measure_topics(bootstrap: str) -> set[str]:
    from kafka.admin import KafkaAdminClient

    client = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        return {t for t in client.list_topics() if t.startswith("kafka-assignors-measure-")}
    finally:
        client.close()


def test_sizing_measures_one_partition_and_deletes_its_topic(
    kafka_broker: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """2,000 records of 500 bytes go through a temporary topic; the measured rates become
    Tp and Tc of the sizing, and the topic is gone afterwards."""
    from kafka_assignors.pipeline.measure import measure_throughput

    before = _measure_topics(kafka_broker.bootstrap)
    measured = measure_throughput(kafka_broker.bootstrap, records=2_000, record_bytes=500)
    assert measured.records == 2_000 and measured.record_bytes == 500
    assert measured.producer_bytes_per_s == pytest.approx(measured.producer_messages_per_s * 500)
    # anything that moves 1 MB through a local broker does so at more than 10 kB/s
    assert measured.producer_bytes_per_s > 10_000 and measured.consumer_bytes_per_s > 10_000

    out = tmp_path / "sizing.json"
    code = main(["sizing", "--measure", "--bootstrap", kafka_broker.bootstrap, "--target", "50M",
                 "--measure-records", "2000", "--record-size", "500", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    assert "measured on one partition (2,000 records of 500 bytes): producer" in printed
    result = json.loads(out.read_text())
    tp, tc = result["producer_per_partition"], result["consumer_per_partition"]
    assert tp > 10_000 and tc > 10_000 and result["unit"] == "bytes/s"
    assert result["partitions_needed"] == max(1, -(-50e6 // min(tp, tc)))
    # a given rate is kept; only the missing one is measured
    code = main(["sizing", "--measure", "--bootstrap", kafka_broker.bootstrap, "--target", "1k",
                 "--producer-rate", "123", "--measure-records", "500", "--unit", "messages/s",
                 "--out", str(out)])
    assert code == 0
    again = json.loads(out.read_text())
    assert again["producer_per_partition"] == 123 and again["consumer_per_partition"] > 100
    kinds = {i["name"]: (i["kind"], i["detail"]) for i in again["inputs"]}
    assert kinds["producer throughput per partition (Tp)"] == ("given", "--producer-rate")
    kind, detail = kinds["consumer throughput per partition (Tc)"]
    assert kind == "measured" and detail.startswith("one kafka-python consumer read those 500")
    assert _measure_topics(kafka_broker.bootstrap) - before == set()


def test_a_paced_consumer_is_measured_at_its_own_pace(
    kafka_broker: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With 10 records per poll and 100 ms of processing after each poll, Tc is the paced
    rate (at most 100 records/s, whatever the machine's load), the bare read rate is shown
    beside it, not used, and both say how they were measured."""
    out = tmp_path / "sizing.json"
    code = main(["sizing", "--measure", "--bootstrap", kafka_broker.bootstrap, "--target", "50",
                 "--unit", "messages/s", "--measure-records", "1000", "--record-size", "100",
                 "--max-poll-records", "10", "--processing-ms", "100", "--paced-seconds", "1",
                 "--paced-like", "the test's consumer", "--out", str(out)])
    assert code == 0
    assert "; at the consumer's pace " in capsys.readouterr().out
    result = json.loads(out.read_text())
    tc = result["consumer_per_partition"]
    # n polls of at most 10 records, each followed by 100 ms: at most 100 records/s
    assert 0 < tc <= 100
    slower = min(tc, result["producer_per_partition"])
    assert result["partitions_needed"] == max(1, -(-50 // slower))
    inputs = {i["name"]: i for i in result["inputs"]}
    paced = inputs["consumer throughput per partition (Tc)"]
    assert paced["kind"] == "measured" and paced["used"]
    assert paced["detail"].startswith(
        "one kafka-python consumer paced like the test's consumer (max_poll_records 10, "
        "100 ms of processing after each poll) read ")
    bare = inputs["consumer read rate without processing"]
    assert not bare["used"] and bare["value"] > tc


def test_sizing_without_rates_or_measure_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """No rates and no --measure: exit 2 with the reason."""
    assert main(["sizing", "--target", "1M"]) == 2
    assert "--producer-rate and --consumer-rate (or --measure)" in capsys.readouterr().err
    assert main(["sizing", "--target", "1M", "--measure"]) == 2
    assert "needs --bootstrap" in capsys.readouterr().err
