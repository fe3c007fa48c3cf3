"""The usage matrix: every way a client's users consume, with our assignor and beside the
client alone, on the same broker and workload at the same moment.

Layout (the core knows no client; one thin driver per client):

* ``plans.py``     ``Cell`` (a usage pattern + the timeline its members follow), ``Client``
                   (a client's member script, strategies and cells) and the timelines:
                   join-leave, subscription change, static restart, close during a rebalance,
                   unsubscribe/subscribe, manual assign handover, a batch over max poll.
* ``workload.py``  one side of a cell: unique topics and group, a producer of numbered records
                   (60/s), member processes (one child process each, ended by pid), their
                   events, and ``settled_at``: when the members hold every partition once.
* ``zygote.py``    the fork server members start from: one per (interpreter, member script),
                   its imports done once; a member is still ``python script '<config>'``.
* ``judge.py``     what a side did (exceptions, expelled, lost, read twice, settle times,
                   cooperative kept-partition pause) and the precise "worse" rule.
* ``noise.py``     the run's scheduling noise (a probe process's late wake-ups), summed
                   over each change's window: the time allowance's load term.
* ``runner.py``    both sides of a pair concurrently, pairs in parallel, broker-log check.
* ``report.py``    JSON + Markdown; ``__main__.py`` the command that writes the results file.
* ``kafka_python.py`` + ``kafka_python_member.py``: the kafka-python driver (its cells, its
  strategies: ours vs kafka-python's own of the same protocol) and its member script.
* ``java_consumer.py`` + ``JavaUsageMember.java``: Kafka's Java consumer as the alone side of
  the consumer-protocol matrix's Java column: a side's members are threads of one JVM, which
  ``Client.alone_host`` hands to ``Side`` as a ``workload.Host`` (each member still a
  "process" with its own events, commands and exit code).

Plugging in another client (confluent-kafka, kafka-python 2.3, aiokafka):

1. Write a member script ``<client>_member.py``: ``python script '<config JSON>'``. The config
   has ``bootstrap``, ``group_id``, ``name`` (use it as the client id), ``strategy`` (the spec
   from your ``Client.strategies``), ``usage`` (the cell's), ``options`` (consumer settings),
   and per plan ``topics`` | ``pattern`` | ``partitions`` (manual assign) | ``static_id``, plus
   the cell's ``extra``. It prints JSON lines to stdout, each with ``event`` and ``mono``
   (``time.monotonic()``, shared by every process of the machine):
   ``started`` (first thing), ``subscribed``, ``assignment`` {held: [[topic, p], ...]} whenever
   what the application holds changes, ``records`` {r: [[topic, p, offset, mono], ...]} for
   records processed (skip values ``b"stop"``: wake-up sentinels), ``exception`` {where, type,
   message, fatal} for every exception that reaches the application, ``expelled`` when the
   client says the member lost its membership (or ``lost`` from ``on_partitions_lost``),
   ``closing`` {longest_call} and ``closed``; and, for the plans that ask, ``resubscribed``,
   ``slow-done``. On stdin it reads JSON commands: ``{"do": "stop"}`` (commit as the usage
   does, close, exit 0), ``subscribe`` {topics}, ``unsubscribe`` {seconds}, ``slow``
   {seconds}. An exception that ends the application: report it, close, exit 1. With
   ``hold`` in the config (a member started ahead of a change: a static restart, a manual
   hand-over), load everything, print ``ready`` and build nothing until ``{"do": "go"}``
   (exit 0 on ``stop``); ``started`` comes after the go.
2. Write ``<client>.py`` with a ``client()`` returning ``plans.Client`` (the script, the
   strategies per protocol: ((our label, spec), (alone label, spec)), the cells, options every
   member sets, and ``describe()`` for the results file), and register it in ``CLIENTS``.
3. Add a test beside ``integration_tests/test_usage_matrix_kafka_python.py`` (the same three
   lines) and a results file: ``python -m integration_tests.usage_matrix --client NAME --out
   docs/results/``.
"""

from __future__ import annotations

#: client name -> "module:function" returning its plans.Client
CLIENTS = {
    "aiokafka": "integration_tests.usage_matrix.aiokafka_client:client",
    "confluent-kafka": "integration_tests.usage_matrix.confluent:client",
    "kafka-python": "integration_tests.usage_matrix.kafka_python:client",
    "kafka-python-2": "integration_tests.usage_matrix.kafka_python_2:client",
    "kafka-python-consumer-protocol":
        "integration_tests.usage_matrix.kafka_python:consumer_protocol_client",
    "kafka-python-consumer-protocol-java":
        "integration_tests.usage_matrix.java_consumer:client",
    "kafka-python-oldest": "integration_tests.usage_matrix.kafka_python:oldest_client",
}
