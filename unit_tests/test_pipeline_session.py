"""The pipeline session's pure parts: addresses, the shipped zip's name, one-line errors.

No Spark is started here (the modes themselves run in integration_tests/test_pipeline_modes.py).
"""

from __future__ import annotations

import socket
import zipfile

import pytest

from kafka_assignors.pipeline.session import (
    SparkUnavailable,
    check_master,
    connect_address,
    one_line,
    package_zip,
)


def test_connect_address_defaults_to_port_15002_and_ignores_parameters() -> None:
    """sc://host[:port][/;params]: Spark Connect's own URL form."""
    assert connect_address("sc://spark.example:443/;use_ssl=true;token=x") == (
        "spark.example",
        443,
    )
    assert connect_address("sc://127.0.0.1") == ("127.0.0.1", 15002)


@pytest.mark.parametrize("url", ["http://host:15002", "sc://", "sc://host:port"])
def test_a_bad_connect_address_is_refused_in_words(url: str) -> None:
    """Not sc://host:port: an error that names it, before any connection."""
    with pytest.raises(SparkUnavailable, match="not a Spark Connect address"):
        connect_address(url)


def test_a_refused_master_is_one_error_naming_it() -> None:
    """A standalone master nobody listens on: SparkUnavailable with the URL and the reason."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"spark://127.0.0.1:{port}"
    with pytest.raises(SparkUnavailable, match=f"Spark master at {url}"):
        check_master(url)
    check_master("local[2]")  # nothing to check
    check_master("yarn")


def test_package_zip_is_named_by_content_and_holds_the_package() -> None:
    """Same content, same name (Spark refuses a same-named artifact with new content)."""
    first, again = package_zip(), package_zip()
    assert first == again and first.name.startswith("kafka_assignors-")
    with zipfile.ZipFile(first) as zf:
        names = zf.namelist()
    assert "kafka_assignors/__init__.py" in names
    assert "kafka_assignors/pipeline/evaluate.py" in names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_one_line_keeps_the_first_line_or_grpc_details() -> None:
    """Java stack traces and gRPC's debug text do not reach the user's terminal."""
    java = RuntimeError("Boom happened\n\tat org.apache.spark.Foo(Foo.scala:1)\n")
    assert one_line(java) == "RuntimeError: Boom happened"
    grpc = RuntimeError(
        '<_InactiveRpcError of RPC that terminated with:\n\tstatus = StatusCode.UNAVAILABLE\n'
        '\tdetails = "failed to connect to all addresses"\n\tdebug_error_string = "..."\n>'
    )
    assert one_line(grpc) == "RuntimeError: failed to connect to all addresses"
