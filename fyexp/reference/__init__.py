"""The papers' published numbers, as data (transcribed in ``paper_tables.csv``; see its columns there).

``load_paper_tables()`` returns one row per published cell with the printed text kept (``value``,
``spread``) and parsed numbers added (``value_num``, ``spread_num``, and ``spread_std``: the spread as one
standard deviation, i.e. ``3std`` spreads divided by three).
"""

from __future__ import annotations

import functools
import math
from importlib import resources


def _to_float(text: object) -> float:
    try:
        return float(str(text))
    except ValueError:
        return float("nan")


def printed_unit(text: object) -> float:
    """The value of one unit in the last printed digit: ``0.606`` → 0.001, ``-832.5`` → 0.1, ``12`` → 1."""
    text = str(text).strip().lower()
    if not math.isfinite(_to_float(text)):
        return float("nan")
    mantissa, _, exponent = text.partition("e")   # 4.8e-8 → 0.1e-8
    return 10.0 ** -len(mantissa.partition(".")[2]) * 10.0 ** int(exponent or 0)


@functools.lru_cache(maxsize=1)
def load_paper_tables() -> pd.DataFrame:
    import numpy as np
    import pandas as pd

    with resources.files("fyexp.reference").joinpath("paper_tables.csv").open() as handle:
        frame = pd.read_csv(handle, dtype=str, keep_default_na=False)
    frame["value_num"] = frame["value"].map(_to_float)
    frame["spread_num"] = frame["spread"].map(_to_float)
    frame["spread_std"] = np.where(frame["spread_kind"] == "3std", frame["spread_num"] / 3.0, frame["spread_num"])
    frame["unit"] = frame["value"].map(printed_unit)
    # frac Table 8 prints "0" for a statistic below 1e-10 (its caption): such a zero means |x| < 1e-10, so its
    # printed-precision band is 1e-10 (a unit of 2e-10), not half of the integer digit
    below = frame["note"].str.contains("below 10^-10", regex=False) & (frame["value_num"] == 0)
    frame.loc[below, "unit"] = 2e-10
    return frame


def paper_cells(paper: str, table: str) -> pd.DataFrame:
    """The published cells of one table (``paper`` id such as ``fyvi``, ``table`` such as ``1`` or ``4a``)."""
    frame = load_paper_tables()
    return frame[(frame["paper"] == paper) & (frame["table"] == str(table))].copy()
