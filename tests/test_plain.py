"""The one JSON-plain conversion (fyexp/plain.py), read by the settings hash, `fyexp show` and --best."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from fyexp.plain import jsonable


@dataclass
class Inner:
    lr: float = 1e-3
    betas: tuple[float, float] = (0.9, 0.999)


@dataclass
class Outer:
    inner: Inner = field(default_factory=Inner)
    folder: Path = Path("/data/x")
    table: dict = field(default_factory=lambda: {1: ("a", Path("b"))})


def test_dataclasses_tuples_paths_and_keys_become_plain_values():
    assert jsonable(Outer()) == {"inner": {"lr": 1e-3, "betas": [0.9, 0.999]}, "folder": "/data/x",
                                 "table": {"1": ["a", "b"]}}
    assert jsonable(Outer) is Outer and jsonable(3) == 3 and jsonable(None) is None   # a class, a number: as they are


def test_the_settings_hash_reads_this_one_function():
    import fyexp.settings

    assert fyexp.settings.jsonable is jsonable
