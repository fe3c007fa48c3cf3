"""``python -m kafka_assignors.pipeline COMMAND ...``, and the file to give ``spark-submit``.

spark-submit [spark options] "$(python -m kafka_assignors.pipeline --path)" evaluate ...
"""

from __future__ import annotations

import sys

from kafka_assignors.cli import main

if __name__ == "__main__":
    if sys.argv[1:] == ["--path"]:
        print(__file__)
        sys.exit(0)
    sys.exit(main(sys.argv[1:]))
