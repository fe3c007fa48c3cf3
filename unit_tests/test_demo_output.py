"""How the demo shows its pipeline step: a progress bar on a terminal, plain lines when piped,
the pipeline's own messages only, and the recommendation held back for the very end."""

from __future__ import annotations

import io

from kafka_assignors.demo import _PipelineOutput

PROGRESS = [
    "[kafka-assignors] evaluate: 3/12 tasks done, 2 running (4 s)\n",
    "[kafka-assignors] evaluate: 12/12 tasks done, 0 running (9 s)\n",
]
NOISE = [
    "26/11/28 19:00:01 WARN NativeCodeLoader: Unable to load native-hadoop library\n",
    "kafka-assignors runtime: not active on the consumer using range: no kafka-python "
    "coordinator was found\n",
]


def _feed(tty: bool) -> tuple[str, str, str, list[str]]:
    out, err, log = io.StringIO(), io.StringIO(), io.StringIO()
    held: list[str] = []
    shown = _PipelineOutput(out, err, log, tty=tty, held=held)
    shown.stdout_line("load profile: reports/demo/profile/profile.json\n")
    for line in [PROGRESS[0], *NOISE, PROGRESS[1]]:
        shown.stderr_line(line)
    shown.stdout_line("recommendation: cooperative-balanced-sticky\n")
    shown.stdout_line("report: /r/report.html\n")
    shown.stderr_line("kafka-assignors analyze: error: something a user must see\n")
    shown.close()
    return out.getvalue(), err.getvalue(), log.getvalue(), held


def test_on_a_terminal_progress_is_one_bar_redrawn_in_place() -> None:
    """Both progress lines draw the same bar (carriage return), ended before the next line."""
    _, err, _, _ = _feed(tty=True)
    assert err.count("\r\x1b[K  evaluate  [") == 2
    assert "[##############################] 12/12 tasks (9 s)\n" in err
    assert "tasks done" not in err
    assert "kafka-assignors analyze: error: something a user must see\n" in err


def test_piped_progress_stays_plain_lines() -> None:
    """Without a terminal the progress lines pass as they are, no control characters."""
    out, err, _, _ = _feed(tty=False)
    assert err.splitlines()[:2] == [p.strip() for p in PROGRESS]
    assert "\r" not in err and "\x1b" not in err + out


def test_only_the_pipelines_own_messages_are_shown_and_all_is_logged() -> None:
    """Spark's and the workers' lines go to the log only; the recommendation is held back."""
    for tty in (True, False):
        out, err, log, held = _feed(tty)
        for line in NOISE:
            assert line not in out + err and line in log
        assert out == "load profile: reports/demo/profile/profile.json\n"
        assert held == ["recommendation: cooperative-balanced-sticky"]
        assert "recommendation:" in log and "report: /r/report.html" in log
