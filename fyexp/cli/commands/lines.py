"""A message on a console: never read as rich markup; one line off a terminal (tests and scripts grep it), wrapped
between words at a terminal's width (:func:`fyexp.run.progress.plain_line`)."""

from __future__ import annotations

from rich.console import Console

from fyexp.run.progress import plain_line


def say(console: Console, message: str) -> None:
    """Print ``message`` on ``console`` as it is: whole off a terminal, wrapped between words on one."""
    plain_line(console, message)
