"""Hypothesis profiles: CI replays a fixed example set; developers explore new ones.

``HYPOTHESIS_PROFILE=ci`` (set by ``.ci/run``) derandomizes, so a CI run is
reproducible; a plain ``make test`` draws fresh examples each time and
prints a reproduction blob when one fails. Neither has a deadline: an example's time says
how busy the machine is (a fresh-clone run at load 20 took 284 ms for one that takes 16 ms),
not whether the property holds; timings live in ``benchmarks/``.
"""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True, deadline=None)
settings.register_profile("dev", print_blob=True, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
