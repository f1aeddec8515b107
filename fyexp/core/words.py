"""How the numbers a user reads are spelled, everywhere fyexp prints one: counts with their noun in the number
they take (``1 cell``, ``5 seeds``) and durations (``42 s``, ``13 min``, ``30.7 h``).  Plain functions of plain
values, below every other layer, so that the runner, the plan, ``tune`` and the figures' titles spell them alike."""

from __future__ import annotations


def duration(seconds: float | None) -> str:
    """``42 s``, ``13 min``, ``30.7 h``, ``1,117 h`` (from 100 h) or ``unknown``."""
    if seconds is None:
        return "unknown"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds >= 100 * 3600:
        return f"{seconds / 3600:,.0f} h"
    return f"{seconds / 60:.0f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def counted(count: int, noun: str = "cell") -> str:
    """``1 cell``, ``2 cells`` (``1 recorded cell``, ``5 seeds``): a count with its noun in the number it takes (the
    one spelling of a count: plans, summaries, figure titles)."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
