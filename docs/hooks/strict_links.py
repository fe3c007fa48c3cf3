"""Build hook: a link to a file the site leaves out fails ``mkdocs build --strict``.

mkdocs reports a page's link to an excluded file (``exclude_docs``, e.g. ``results/``) at INFO
whatever ``validation.links.not_found`` says, so the strict build would publish a dead link.
This hook raises that one message to WARNING, which ``--strict`` counts as an error; the other
link checks are mkdocs' own (``validation:`` in mkdocs.yml).
"""

from __future__ import annotations

import logging
from typing import Any

_EXCLUDED = "which is excluded from the built site"
_LOGGERS = ("mkdocs.structure.pages", "mkdocs.structure.nav")


class _DeadLinkIsAWarning(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING and _EXCLUDED in record.getMessage():
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


_FILTER = _DeadLinkIsAWarning()


def on_config(config: Any) -> Any:
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
    return config
