"""The data pipeline on Spark: profile partition load, evaluate assignors, size, report.

Install with the ``[spark]`` extra.  Importing this package imports nothing
heavy; Spark is started by :func:`kafka_assignors.pipeline.session.build_session`
when a command needs it (``profile``, ``evaluate``).  ``sizing`` and
``report`` run without Spark.  See ``docs/pipeline.md``.
"""
