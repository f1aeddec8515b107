"""Spec loading: profiles merge, values are type-checked, and every bad input names file, key and expectation."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import Literal

import pytest

from fyexp.core.errors import FyexpError, SpecError, require
from fyexp.spec.specs import conforms, deep_merge, load_spec, parse_seeds, resolve


@dataclass
class Cfg:
    n_iter: int = 10
    lr: float = 0.1
    rhos: list[float] = field(default_factory=lambda: [1.0])
    kind: Literal["a", "b"] = "a"
    nested: dict = field(default_factory=dict)

    def __post_init__(self):
        require(self.n_iter > 0, "n_iter", "a positive integer", self.n_iter)


def write(tmp_path, name, body):
    path = tmp_path / f"{name}.yaml"
    path.write_text(textwrap.dedent(body))
    return path


GOOD = """
name: exp
title: An experiment
runner: gmm_clustering
defaults:
  n_iter: 5
  nested: {a: 1, b: {c: 2}}
profiles:
  paper: {seeds: [0, 1, 2]}
  quick: {n_iter: 2, nested: {b: {c: 3}}}
"""


def test_profiles_deep_merge_and_coerce(tmp_path):
    write(tmp_path, "exp", GOOD)
    spec = load_spec("exp", tmp_path)
    quick = resolve(spec, "quick", Cfg)
    assert quick.config.n_iter == 2 and quick.seeds == (0,)
    assert quick.config.nested == {"a": 1, "b": {"c": 3}}
    paper = resolve(spec, "paper", Cfg, seeds=[7])
    assert paper.seeds == (7,) and paper.config.n_iter == 5
    assert isinstance(paper.config.lr, float)


@pytest.mark.parametrize("override, key, expected", [
    ("n_iter: 'ten'", "profiles.quick.n_iter", "an integer"),
    ("n_iter: 1.5", "profiles.quick.n_iter", "an integer"),
    ("lr: true", "profiles.quick.lr", "a number"),
    ("rhos: [1, x]", "profiles.quick.rhos", "a list of numbers"),
    ("kind: c", "profiles.quick.kind", "one of 'a', 'b'"),
    ("n_iters: 3", "profiles.quick.n_iters", "one of the parameters"),
    ("n_iter: 0", "profiles.quick.n_iter", "a positive integer"),
    ("seeds: []", "profiles.quick.seeds", "a non-empty list of distinct non-negative integers"),
])
def test_bad_values_name_file_key_and_expectation(tmp_path, override, key, expected):
    path = write(tmp_path, "exp", GOOD.replace("quick: {n_iter: 2, nested: {b: {c: 3}}}", f"quick: {{{override}}}"))
    with pytest.raises(SpecError) as info:
        resolve(load_spec("exp", tmp_path), "quick", Cfg)
    message = str(info.value)
    assert str(path) in message and f"'{key}'" in message and expected in message


def test_unknown_profile_experiment_and_top_level_key(tmp_path):
    write(tmp_path, "exp", GOOD)
    with pytest.raises(SpecError, match="profiles.*'paper', 'quick'"):
        resolve(load_spec("exp", tmp_path), "nope", Cfg)
    with pytest.raises(FyexpError, match="unknown experiment 'other'.*known experiments: exp"):
        load_spec("other", tmp_path)
    write(tmp_path, "bad", GOOD.replace("name: exp", "name: bad\ncolour: red"))
    with pytest.raises(SpecError, match="key 'colour': expected one of the top-level keys"):
        load_spec("bad", tmp_path)
    # the top level is declared like a profile's parameters (fyexp.spec.specs.TopLevel): types, required keys
    write(tmp_path, "bad", GOOD.replace("name: exp", "name: bad\ntables: [Table 1, 2]"))
    with pytest.raises(SpecError, match=r"bad\.yaml: key 'tables': expected a list of strings, got \['Table 1', 2\]"):
        load_spec("bad", tmp_path)
    write(tmp_path, "bad", GOOD.replace("name: exp", "name: bad\ntables: [Table 1, '2']"))
    assert load_spec("bad", tmp_path).tables == ("Table 1", "2")
    write(tmp_path, "bad", GOOD.replace("name: exp", "name: bad").replace("runner: gmm_clustering\n", ""))
    with pytest.raises(SpecError, match=r"bad\.yaml: key 'runner': expected a string \(required\)$"):
        load_spec("bad", tmp_path)
    write(tmp_path, "wrongname", GOOD)
    with pytest.raises(SpecError, match="key 'name'.*'wrongname'"):
        load_spec("wrongname", tmp_path)


def test_invalid_yaml_reports_line(tmp_path):
    write(tmp_path, "broken", "name: broken\nprofiles: {paper: [\n")
    with pytest.raises(FyexpError, match=r"broken.yaml: not valid YAML at line"):
        load_spec("broken", tmp_path)


def test_helpers():
    assert deep_merge({"a": {"b": 1, "c": 2}}, {"a": {"c": 3}}) == {"a": {"b": 1, "c": 3}}
    assert parse_seeds("0-3") == [0, 1, 2, 3] and parse_seeds("1,5") == [1, 5] and parse_seeds(None) is None
    with pytest.raises(FyexpError):
        parse_seeds("a,b")
    assert conforms(3, float) and not conforms(True, int) and not conforms(3.0, int)
    assert conforms(None, int | None) and conforms([1, 2], tuple[int, ...])


# ---- declared domains (fyexp.core.constraints)
# ------------------------------------------------------------------------
from typing import Annotated  # noqa: E402

from fyexp.core.constraints import DISTINCT, Interval, OneOf, PositiveInt, problem, settings  # noqa: E402
from fyexp.core.errors import ConfigValueError  # noqa: E402


@pytest.mark.parametrize("hint, inside, outside, expected", [
    (PositiveInt, 1, 0, "an integer >= 1"),
    (Annotated[int, Interval(int, 1, 16)], 16, 17, "an integer in [1, 16]"),
    (Annotated[float, Interval(float, 0, None, "neither")], 1e-300, 0.0, "a positive number"),
    (Annotated[float, Interval(float, 0, None)], 0.0, -1e-300, "a number >= 0"),
    (Annotated[float, Interval(float, 0, 1, "right")], 1.0, 1.0 + 1e-12, "a number in (0, 1]"),
    (Annotated[float, Interval(float, -2, 3, "left")], -2, 3, "a number in [-2, 3)"),
    (Annotated[int, Interval(int, 3, None)] | None, None, 2, "an integer >= 3 or null"),
    (list[Annotated[int, Interval(int, 2, None)]], [2, 9], [9, 1], "integers >= 2"),
    (tuple[float, Annotated[float, Interval(float, 0, 1, "left")]], (5.0, 0.0), (0.5, 1.0), "numbers in [0, 1)"),
    (list[Annotated[str, OneOf(("a", "b"))]], ["b"], ["b", "c"], "names among ['a', 'b']"),
    (Annotated[str, OneOf({1.0: "x", 2.0: "y"})], 2, 3, "one among [1.0, 2.0]"),
    (Annotated[list[int], DISTINCT], [1, 2], [2, 2], "distinct items"),
    (dict[str, PositiveInt], {"a": 1}, {"a": 1, "b": 0}, "a mapping with integers >= 1 as values"),
    (dict[Annotated[str, OneOf(["a"])], int], {"a": 0}, {"z": 0}, "a mapping with names among ['a'] as keys"),
])
def test_a_declared_domain_accepts_its_edge_and_refuses_just_outside(hint, inside, outside, expected):
    assert problem(inside, hint) is None
    assert problem(outside, hint) == expected


@settings
class Declared:
    low: PositiveInt = 1
    high: PositiveInt = 5

    def __post_init__(self):
        require(self.low <= self.high, "low", "at most high", self.low)


def test_settings_checks_every_declared_field_then_the_relations(tmp_path):
    """Built from Python or from a spec, the field's own domain is checked first, then ``__post_init__``."""
    with pytest.raises(ConfigValueError, match="key 'high': expected an integer >= 1, got 0"):
        Declared(high=0)
    with pytest.raises(ConfigValueError, match="key 'low': expected at most high"):
        Declared(low=6)
    assert Declared(low=5).high == 5
    write(tmp_path, "exp", "name: exp\ntitle: t\nrunner: gmm_clustering\n"
                           "profiles: {quick: {high: 1}, bad: {high: 0}}\n")
    spec = load_spec("exp", tmp_path)
    assert resolve(spec, "quick", Declared).config == Declared(1, 1)
    with pytest.raises(SpecError, match=r"exp\.yaml: key 'profiles\.bad\.high': expected an integer >= 1, got 0"):
        resolve(spec, "bad", Declared)
