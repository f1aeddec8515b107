"""The one description of a type and of a number's domain (fyexp.core.constraints.describe and Interval): what
every one-line error of a spec, a claim, a grid axis and a command-line option says was expected."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, Literal

import pytest

from fyexp.core.constraints import Interval, OneOf, PositiveFloat, PositiveInt, describe


@pytest.mark.parametrize("interval, singular, plural", [
    (Interval(int, 3, None), "an integer >= 3", "integers >= 3"),
    (Interval(int, 3, None, "neither"), "an integer > 3", "integers > 3"),
    (Interval(float, None, 7.5), "a number <= 7.5", "numbers <= 7.5"),
    (Interval(float, None, 7.5, "left"), "a number < 7.5", "numbers < 7.5"),
    (Interval(float, -1, 2, "both"), "a number in [-1, 2]", "numbers in [-1, 2]"),
    (Interval(float, -1, 2, "left"), "a number in [-1, 2)", "numbers in [-1, 2)"),
    (Interval(float, -1, 2, "right"), "a number in (-1, 2]", "numbers in (-1, 2]"),
    (Interval(int, -1, 2, "neither"), "an integer in (-1, 2)", "integers in (-1, 2)"),
    (Interval(float, 0, None, "neither"), "a positive number", "positive numbers"),
    (Interval(float, 0, None, "right"), "a positive number", "positive numbers"),
    (Interval(float, 0, None), "a number >= 0", "numbers >= 0"),
    (Interval(float, 0, None, "left"), "a number >= 0", "numbers >= 0"),
    (Interval(int, 0, None, "neither"), "an integer > 0", "integers > 0"),   # the positive-number words are floats'
    (Interval(float, None, None), "a number", "numbers"),
])
def test_an_interval_names_its_ends_as_they_are_closed(interval, singular, plural):
    assert interval.describe() == singular and interval.describe(plural=True) == plural


@pytest.mark.parametrize("value, inside", [(3, True), (2, False), (3.0, False), (True, False), (float("inf"), False),
                                           ("3", False)])
def test_an_integer_interval_holds_finite_integers_only(value, inside):
    assert Interval(int, 3, None).contains(value) is inside


@dataclasses.dataclass
class _Block:
    b: int = 0
    a: int = 0


@pytest.mark.parametrize("hint, singular, plural", [
    (float, "a number", "numbers"),
    (int, "an integer", "integers"),
    (str, "a string", "strings"),
    (bool, "true or false", "true or false"),
    (Any, "any value", "any values"),
    (type(None), "null", "null"),
    (PositiveInt, "an integer >= 1", "integers >= 1"),
    (PositiveFloat | None, "a positive number or null", "positive numbers or null"),
    (str | float, "a string or a number", "strings or numbers"),              # no null where none is allowed
    (None | int, "an integer or null", "integers or null"),                  # null last, wherever it was written
    (Literal["a", "b"], "one of 'a', 'b'", "values among ['a', 'b']"),
    (Annotated[str, OneOf(("p", "q"))], "one among ['p', 'q']", "names among ['p', 'q']"),
    (list[float], "a list of numbers", "a list of numbers"),
    (list[PositiveInt], "a list of integers >= 1", "a list of integers >= 1"),
    (tuple[str, ...], "a list of strings", "a list of strings"),
    (list, "list", "list"),
    (dict[str, int], "a mapping", "a mapping"),
    (_Block, "a mapping of ['a', 'b']", "a mapping of ['a', 'b']"),
])
def test_a_type_is_described_by_its_declared_domain_else_by_its_kind(hint, singular, plural):
    assert describe(hint) == singular and describe(hint, plural=True) == plural
