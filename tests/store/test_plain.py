"""The one JSON-plain conversion (fyexp/store/plain.py), read by the settings hash, `fyexp show` and --best."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from fyexp.store.plain import jsonable


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
    import fyexp.spec.settings

    assert fyexp.spec.settings.jsonable is jsonable


def test_jsonable_fields_is_jsonable_less_the_fields_in_the_same_order():
    """Every profile's Config of every experiment: the cheap conversion (the grid never converted) gives the mapping
    and key order ``jsonable`` gives once the field is dropped, so a cell's settings hash cannot move."""
    from fyexp.experiments import get_config_class
    from fyexp.store.plain import jsonable, jsonable_fields
    from fyexp.spec.specs import available_specs, load_spec, resolve

    checked = 0
    for name in available_specs():
        spec = load_spec(name)
        for profile in spec.profile_names():
            config = resolve(spec, profile, get_config_class(spec.runner)).config
            whole = jsonable(config)
            for without in ((), ("grid",), tuple(whole)[:2]):
                expected = {k: v for k, v in whole.items() if k not in without}
                got = jsonable_fields(config, without)
                assert got == expected and list(got) == list(expected), (name, profile, without)
            checked += 1
    assert checked >= 20
