"""The data pipeline on Spark: profile partition load, evaluate assignors, size, report.

Install with the ``[spark]`` extra.  Importing this package imports nothing
heavy; Spark is started by :meth:`kafka_assignors.pipeline.session.Session.start`
(locally, on a cluster, or on a Spark Connect server) when a command needs it
(``profile``, ``evaluate``, ``analyze``).  ``sizing`` and
``report`` run without Spark.  See ``docs/pipeline.md``.
"""
