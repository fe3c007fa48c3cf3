"""``python -m kafka_assignors.pipeline COMMAND ...``, and the file to give ``spark-submit``.

spark-submit [spark options] "$(python -m kafka_assignors.pipeline --path)" evaluate ...
"""

import os
import sys

# spark-submit runs this file as a script, which puts this directory first on sys.path;
# our profile.py would then shadow the standard library's profile module.
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    del sys.path[0]

from kafka_assignors.cli import main

if __name__ == "__main__":
    if sys.argv[1:] == ["--path"]:
        print(__file__)
        sys.exit(0)
    sys.exit(main(sys.argv[1:]))
