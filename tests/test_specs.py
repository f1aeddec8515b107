"""Spec loading: profiles merge, values are type-checked, and every bad input names file, key and expectation."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import Literal

import pytest

from fyexp.errors import FyexpError, SpecError, require
from fyexp.specs import conforms, deep_merge, load_spec, parse_seeds, resolve


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
runner: x
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
    ("rhos: [1, x]", "profiles.quick.rhos", "a list of a number"),
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
    with pytest.raises(SpecError, match="key 'colour'"):
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
