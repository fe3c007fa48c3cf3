"""Hypothesis profiles: CI replays a fixed example set; developers explore new ones.

``HYPOTHESIS_PROFILE=ci`` (set by ``.ci/run``) derandomizes, so a CI run is
reproducible; a plain ``make test`` draws fresh examples each time and
prints a reproduction blob when one fails.
"""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("dev", print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
