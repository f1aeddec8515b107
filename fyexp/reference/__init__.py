"""The papers and their published numbers, as data: the papers and how their tables are read (``paper_meta.yaml``,
read with nothing heavier than YAML: the claims' rendering reads the paper ids) and the numbers themselves
(``paper_tables.csv``; see its columns there).

``load_paper_tables()`` returns one row per published cell with the printed text kept (``value``,
``spread``) and parsed numbers added (``value_num``, ``spread_num``, and ``spread_std``: the spread as one
standard deviation, i.e. ``3std`` spreads divided by three).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from importlib import resources

from fyexp.store.plain import safe_yaml


@functools.lru_cache(maxsize=1)
def _meta() -> dict:
    return safe_yaml(resources.files(__name__).joinpath("paper_meta.yaml").read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Paper:
    """One paper of the project (``papers:`` of ``paper_meta.yaml``): its id, printed title, and how specs cite it."""

    id: str
    title: str
    cited_as: str


def papers() -> dict[str, Paper]:
    """The five papers, by id, in the order of ``paper_meta.yaml`` (the project's one list of them)."""
    return {key: Paper(key, entry["title"], entry["cited_as"]) for key, entry in _meta()["papers"].items()}


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

    with resources.files(__name__).joinpath("paper_tables.csv").open() as handle:
        frame = pd.read_csv(handle, dtype=str, keep_default_na=False)
    frame["value_num"], frame["spread_num"] = (pd.to_numeric(frame[c], errors="coerce") for c in ("value", "spread"))
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
