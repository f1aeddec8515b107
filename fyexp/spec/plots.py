"""The figures a spec may name in ``plots:``, and the keyword options each accepts: checked when the spec loads,
so a typo fails before a run, without importing the report (pandas, matplotlib) that draws them.  The figure
functions of :mod:`fyexp.report.figures` register under these names (a name missing here, or other keyword-only
options, raises at import); a new figure adds its name below.
"""

from __future__ import annotations

from typing import Any

from fyexp.core.errors import ConfigValueError, require

# figure name → its keyword-only options (``fn(ctx, *, option=...)``)
FIGURES: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("frac-calibration-notes", "frac-coverage-length", "frac-figure1", "frac-figure2", "frac-figure3",
                     "frac-figure4", "frac-figure5", "frac-figure6", "frac-figure7", "fyvi-figure1", "fyvi-figure2",
                     "tvem-bars", "tvem-figure1", "vae-prior-samples", "vae-reconstructions", "vr-figure2b",
                     "vr-figure3", "vr-figure4"), ()),
    "optuna-history": ("title",),
    "topic-coherence": ("models", "stem"),
}


def check_plot(entry: Any, key: str = "plots") -> tuple[str, dict]:
    """``(name, options)`` of a ``plots:`` entry (a name, or a one-key mapping of a name to its options); else
    :class:`fyexp.core.errors.ConfigValueError` for ``key``."""
    if isinstance(entry, str):
        name, options = entry, {}
    elif isinstance(entry, dict) and len(entry) == 1 and isinstance(next(iter(entry.values())) or {}, dict):
        name, options = next(iter(entry)), next(iter(entry.values())) or {}
    else:
        raise ConfigValueError(key, "a figure name, or a one-key mapping of a figure name to its options", entry)
    require(name in FIGURES, key, f"a figure among {sorted(FIGURES)}", name)
    unknown = sorted(set(options) - set(FIGURES[name]))
    require(not unknown, key, f"options of '{name}' among {list(FIGURES[name])}", unknown)
    return name, dict(options)
