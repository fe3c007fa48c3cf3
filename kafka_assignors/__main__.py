"""``python -m kafka_assignors``: the ``kafka-assignors`` command."""

import sys

from .cli import main

sys.exit(main())
