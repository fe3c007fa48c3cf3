"""`import kafka_assignors` stays light: no Spark, Docker, Testcontainers or optional clients."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_package_pulls_in_no_heavy_dependency() -> None:
    """A fresh interpreter that imports kafka_assignors (and its metrics core) has loaded none
    of the optional stacks, the Prometheus and OpenTelemetry exports' libraries included."""
    code = (
        "import sys, kafka_assignors, kafka_assignors.metrics\n"
        "heavy = {'pyspark', 'docker', 'testcontainers', 'confluent_kafka', 'aiokafka',"
        " 'matplotlib', 'pandas', 'pyarrow', 'prometheus_client', 'opentelemetry'}\n"
        "print(sorted(heavy & {m.split('.')[0] for m in sys.modules}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == "[]"
