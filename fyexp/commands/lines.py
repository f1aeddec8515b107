"""A message as one line on a console: never read as rich markup, never wrapped (tests and scripts grep it)."""

from __future__ import annotations

from rich.console import Console


def say(console: Console, message: str) -> None:
    """Print ``message`` on ``console`` as it is, on one line."""
    console.print(message, markup=False, highlight=False, soft_wrap=True)
