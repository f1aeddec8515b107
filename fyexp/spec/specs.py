"""YAML experiment specs ``experiments/<name>.yaml`` (docs/profiles.md; top-level keys: :class:`TopLevel`) →
validated, resolved configurations.  A profile is ``defaults`` deep-merged with ``profiles[<profile>]`` and the
``--set`` overrides: ``seeds`` is the framework's key, every other a field of the runner's ``Config``.  Every problem
is a :class:`~fyexp.core.errors.SpecError` naming the file, the key and what was expected."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import itertools
import os
import re
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fyexp.core.constraints import DISTINCT, conforms, describe, settings
from fyexp.core.constraints import MAX_SEED, Interval, check_options, spec_value_problem
from fyexp.core.errors import ConfigValueError, FyexpError, SpecError, require
from fyexp.spec.plots import check_plot

MAX_SEEDS = 100_000   # seeds one --seeds may name (a paper profile has at most 10)
SEEDS = typing.Annotated[list[typing.Annotated[int, Interval(int, 0, MAX_SEED)]], DISTINCT]   # a profile's seeds

# a spec's runner is one of these modules fyexp/experiments/<runner>.py, never a module path read from the file
RUNNERS = ("frac_vae", "fy_vae", "gmm_calibration", "gmm_clustering", "nvdm", "tvem_bsc", "vr_bnn",
           "vr_renyi_gaussians", "vr_vae")
EXTRA_RUNNERS_ENV = "FYEXP_RUNNERS"


def extra_runners() -> tuple[str, ...]:
    """The user's own runners' modules named by ``$FYEXP_RUNNERS`` (trusted as ``PYTHONPATH`` is)."""
    return tuple(name.strip() for name in os.environ.get(EXTRA_RUNNERS_ENV, "").split(",") if name.strip())


def known_runners() -> tuple[str, ...]:
    """Every name a spec's ``runner`` may take."""
    return tuple(dict.fromkeys(RUNNERS + extra_runners()))


def check_runner(runner: object, source: object = "spec") -> str:
    """``runner`` if it is one of :func:`known_runners`, else a :class:`SpecError` naming ``source``."""
    known = known_runners()
    if not isinstance(runner, str) or runner not in known:
        raise SpecError(source, "runner", f"one of the registered runners {', '.join(known)} (a runner of your "
                        f"own: name its module in ${EXTRA_RUNNERS_ENV})", runner)
    return runner


@settings
class TopLevel:
    """The top-level keys of a spec file, checked like a profile's parameters; ``plots`` become (figure, options)."""

    name: str
    title: str
    runner: str
    profiles: dict
    paper: str = ""
    tables: tuple[str, ...] = ()
    figures: tuple[str, ...] = ()
    plots: list = ()
    description: str = ""
    defaults: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        for profile, values in self.profiles.items():
            require(isinstance(values, dict), f"profiles.{profile}", "a mapping of parameters", values)
        self.plots = tuple(check_plot(entry, f"plots[{i}]") for i, entry in enumerate(self.plots))


def experiments_dir() -> Path:
    """``$FYEXP_EXPERIMENTS_DIR`` (set but empty: an error), else ``./experiments``, else the source tree's."""
    env = os.environ.get("FYEXP_EXPERIMENTS_DIR")
    if env is not None and not env.strip():
        raise FyexpError("FYEXP_EXPERIMENTS_DIR is set but empty; expected the folder of spec files (or unset it to "
                         "use ./experiments)")
    if env:
        return Path(env)
    local = Path.cwd() / "experiments"
    if local.is_dir() and any(local.glob("*.yaml")):
        return local
    return Path(__file__).resolve().parents[2] / "experiments"


@dataclass(frozen=True)
class ExperimentSpec:
    """A spec file's :class:`TopLevel`, with raw, not yet validated profiles."""

    name: str
    title: str
    runner: str
    path: Path
    paper: str = ""
    tables: tuple[str, ...] = ()
    figures: tuple[str, ...] = ()
    plots: tuple[tuple[str, dict], ...] = ()      # figure functions of fyexp.report.figures: (name, options)
    description: str = ""
    defaults: dict = field(default_factory=dict)
    profiles: dict = field(default_factory=dict)

    def profile_names(self) -> list[str]:
        return list(self.profiles)


@dataclass(frozen=True)
class ResolvedSpec:
    """One profile of a spec, validated: ``config`` is an instance of the runner's ``Config``."""

    spec: ExperimentSpec
    profile: str
    seeds: tuple[int, ...]
    config: Any
    raw: dict
    overrides: tuple[tuple[str, Any], ...] = ()   # ``--set`` overrides as (dotted key, parsed value)
    base: str | None = None                        # the spec's profile when ``profile`` is a variant label

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def base_profile(self) -> str:
        """The spec's profile this one derives from (``paper`` for the variant ``paper+lr=1e-4``)."""
        return self.base or self.profile


class _StrictLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """The (libyaml where there) SafeLoader refusing a key given twice in one mapping (PyYAML keeps the last)."""

    def construct_mapping(self, node, deep=False):
        seen: dict = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":     # ``<<: *anchor``: merged by the SafeLoader
                continue
            key = self.construct_object(key_node, deep=True)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key '{key}' (first at line {seen[key] + 1})", key_node.start_mark)
            seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)


MAX_SPEC_BYTES = 1 << 20      # a spec file (the largest shipped: ~10 KB)
MAX_SET_CHARS = 1 << 14       # the value of one --set
MAX_YAML_DEPTH = 32           # nested mappings and lists (a shipped spec: at most 6)
MAX_YAML_NODES = 100_000      # values once every alias is expanded (a shipped spec: ~1,000)


def yaml_bound_problem(text: str) -> str | None:
    """What makes ``text`` too large to read, or None: deeper than :data:`MAX_YAML_DEPTH`, more than
    :data:`MAX_YAML_NODES` values with its aliases expanded (a "billion laughs" bomb), or a self-containing alias.
    One pass over the parser's events; a text that does not parse is left to the loader."""
    sizes: dict[str, int] = {}
    open_nodes: list[list] = [[None, 0]]   # the text, then each open collection: [anchor, expanded size so far]
    try:
        for event in yaml.parse(text, Loader=_StrictLoader):
            if isinstance(event, yaml.CollectionStartEvent):
                if len(open_nodes) > MAX_YAML_DEPTH:
                    return f"nested deeper than {MAX_YAML_DEPTH} levels"
                open_nodes.append([event.anchor, 1])
                continue
            if isinstance(event, yaml.CollectionEndEvent):
                anchor, size = open_nodes.pop()
            elif isinstance(event, yaml.ScalarEvent):
                anchor, size = event.anchor, 1
            elif isinstance(event, yaml.AliasEvent):
                if event.anchor not in sizes:
                    return (f"the alias *{event.anchor} refers to a collection that contains it" if
                            any(a == event.anchor for a, _ in open_nodes) else None)
                anchor, size = None, sizes[event.anchor]
            else:
                continue
            if anchor is not None:
                sizes[anchor] = size
            open_nodes[-1][1] += size
            if sum(n for _, n in open_nodes) > MAX_YAML_NODES:
                return f"more than {MAX_YAML_NODES:,} values once its aliases are expanded"
    except yaml.YAMLError:
        return None     # the loader's error names the line
    return None


def load_yaml(text: str, where: object) -> Any:
    """``text`` read as bounded YAML for a spec file or a ``--set`` value; else one line naming ``where``."""
    problem = yaml_bound_problem(text)
    if problem is not None:
        raise FyexpError(f"{where}: not read: its YAML is {problem}")
    try:
        return yaml.load(text, Loader=_StrictLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise FyexpError(f"{where}: not valid YAML{at}: {getattr(exc, 'problem', exc)}") from None


def available_specs(directory: Path | None = None) -> list[str]:
    """Names of the experiments with a spec file in ``directory``."""
    return sorted(p.stem for p in (directory or experiments_dir()).glob("*.yaml"))


def load_spec(name: str, directory: Path | None = None) -> ExperimentSpec:
    """Read and check the top level of ``experiments/<name>.yaml`` (at most :data:`MAX_SPEC_BYTES` of UTF-8)."""
    path = (directory or experiments_dir()) / f"{name}.yaml"
    if not path.is_file():
        known = ", ".join(available_specs(directory)) or "none"
        raise FyexpError(f"unknown experiment '{name}': no {path} (known experiments: {known})")
    try:
        with open(path, "rb") as handle:     # a regular file (checked above): no blocking read
            raw = handle.read(MAX_SPEC_BYTES + 1)
    except OSError as exc:
        raise FyexpError(f"{path}: cannot read spec file ({exc.strerror})") from None
    if len(raw) > MAX_SPEC_BYTES:
        raise FyexpError(f"{path}: a spec file over {MAX_SPEC_BYTES:,} bytes; expected at most {MAX_SPEC_BYTES:,}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise FyexpError(f"{path}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at line {line}); "
                         f"save the spec as UTF-8") from None
    data = load_yaml(text, path)
    if not isinstance(data, dict):
        raise SpecError(path, "<top level>", "a mapping of keys to values", type(data).__name__)
    top = build_config(TopLevel, data, path, "", generic_rule=False)
    if top.name != name:
        raise SpecError(path, "name", f"'{name}' (the file's name)", top.name)
    check_runner(top.runner, path)   # looked up in the registry, never imported as written
    return ExperimentSpec(path=path, **vars(top))


def deep_merge(base: dict, override: dict) -> dict:
    """``base`` updated by ``override``, recursing into nested mappings."""
    merged = dict(base)
    for key, value in override.items():
        both = isinstance(value, dict) and isinstance(merged.get(key), dict)
        merged[key] = deep_merge(merged[key], value) if both else value
    return merged


def get_path(obj: Any, path: str) -> Any:
    """The value at a dotted path of nested dataclasses (``train.optimizer.lr``)."""
    return functools.reduce(getattr, path.split("."), obj)


def _coerce(value: Any, hint: Any) -> Any:
    """YAML lists into tuples for a tuple; ints into floats for a float."""
    origin = typing.get_origin(hint)
    if hint is float and isinstance(value, int):
        return float(value)
    if origin is tuple and isinstance(value, list):
        return tuple(value)
    if origin is list and isinstance(value, list):
        args = typing.get_args(hint)
        return [_coerce(v, args[0]) for v in value] if args else list(value)
    return value


_type_hints = functools.lru_cache(maxsize=None)(typing.get_type_hints)   # once per class (about a millisecond)


def build_config(config_cls: type, values: dict, path: Path, where: str, generic_rule: bool = True) -> Any:
    """``config_cls`` built from ``values``, nested dataclasses recursively; an error names the full key path
    (``profiles.paper.train.optimizer.lr``; ``where`` empty: the top level).  Each value obeys its declared type and
    domain and, with ``generic_rule``, :func:`fyexp.core.constraints.spec_value_problem`."""
    hints = _type_hints(config_cls)
    fields = {f.name: f for f in dataclasses.fields(config_cls)}
    at = (lambda key: f"{where}.{key}") if where else str
    for key in values:
        if key not in fields:
            raise SpecError(path, at(key), f"one of the {'parameters' if where else 'top-level keys'} {sorted(fields)}")
    kwargs = {}
    for name, fld in fields.items():
        if name not in values:
            if fld.default is dataclasses.MISSING and fld.default_factory is dataclasses.MISSING:
                raise SpecError(path, at(name), f"{describe(hints[name])} (required)")
            continue
        value, hint = values[name], hints[name]   # a nested dataclass: ``Cfg`` or ``Cfg | None``
        union = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
        nested = [a for a in union if dataclasses.is_dataclass(a) and isinstance(a, type)]
        if len(nested) == 1 and isinstance(value, dict):
            nested = nested[0]
            if not value and getattr(nested, "__empty__", None):   # a grid: {} has no cell, not the default grid
                raise SpecError(path, at(name), nested.__empty__, value)
            kwargs[name] = build_config(nested, value, path, at(name))
            continue
        if not conforms(value, hint):
            raise SpecError(path, at(name), describe(hint), value)
        default = fld.default_factory() if fld.default_factory is not dataclasses.MISSING else fld.default
        if generic_rule and (problem := spec_value_problem(value, default)) is not None:
            raise SpecError(path, at(name), problem, value)
        kwargs[name] = _coerce(value, hint)
    try:
        config = config_cls(**kwargs)
        if isinstance(kwargs.get("search"), dict):   # a tuning study's space: refused here, not at the first trial
            check_search(kwargs["search"], config_cls)
        return config
    except ConfigValueError as exc:
        raise SpecError(path, at(exc.key), exc.expected, exc.got) from None


def resolve(spec: ExperimentSpec, profile: str, config_cls: type, seeds: list[int] | None = None,
            overrides: "list[Override] | None" = None) -> ResolvedSpec:
    """``defaults`` merged with ``profiles[profile]`` and the ``--set`` ``overrides``, validated, at ``seeds`` (None:
    the profile's).  With overrides it is a *variant* (:func:`variant_label`), its bad override named ``--set``."""
    if profile not in spec.profiles:
        raise SpecError(spec.path, "profiles", f"a profile named one of {spec.profile_names()}", profile)
    merged = deep_merge(spec.defaults, spec.profiles[profile])
    where = f"profiles.{profile}"
    overrides = list(overrides or [])
    for override in overrides:      # its dotted key set, creating nested mappings (copies: the spec is left as read)
        node, (*parents, last) = merged, override.key.split(".")
        for i, part in enumerate(parents):
            if (child := node.get(part)) is not None and not isinstance(child, dict):
                raise SpecError("--set", ".".join(parents[: i + 1]), "a mapping of parameters to descend into", child)
            node[part] = node = dict(child or {})
        node[last] = override.value
    try:
        raw_seeds = merged.pop("seeds", [0])
        if not raw_seeds or not conforms(raw_seeds, SEEDS):
            raise SpecError(spec.path, f"{where}.seeds",
                            f"a non-empty list of distinct non-negative integers (at most {MAX_SEED})", raw_seeds)
        config = build_config(config_cls, merged, spec.path, where)
    except SpecError as exc:
        key = exc.key[len(where) + 1:] if exc.key.startswith(where + ".") else exc.key
        if any(key == o.key or key.startswith(o.key + ".") or o.key.startswith(key + ".") for o in overrides):
            raise SpecError("--set", key, exc.expected, exc.got) from None
        raise
    chosen = tuple(seeds) if seeds is not None else tuple(raw_seeds)
    return ResolvedSpec(spec=spec, profile=variant_label(profile, overrides) if overrides else profile, seeds=chosen,
                        config=config, raw={**merged, "seeds": list(chosen)},
                        overrides=tuple((o.key, o.value) for o in overrides), base=profile if overrides else None)


def resolve_variant(spec: ExperimentSpec, profile: str, config_cls: type, seeds: "list[int] | None",
                    overrides: "list[Override] | None" = None) -> ResolvedSpec:
    """:func:`resolve` for ``fyexp run --seeds``: seeds other than the profile's (as a set) are the override
    ``seeds=[...]`` and make a *variant* (``paper+seeds=0-9``)."""
    overrides = list(overrides or [])
    if seeds is not None and set(seeds) != set(resolve(spec, profile, config_cls, None, overrides).seeds):
        overrides.append(Override("seeds", list(seeds), seed_ranges(list(seeds))))
    return resolve(spec, profile, config_cls, None, overrides)


@dataclass(frozen=True)
class Override:
    """One ``--set KEY=VALUE``: a dotted path into the merged profile and its value parsed as YAML."""

    key: str
    value: Any
    text: str   # the value as typed, for labels


def parse_sets(items: list[str] | None) -> list[Override]:
    """``["train.optimizer.lr=1e-4"]`` → overrides, values read as YAML (``1e-4`` a number, as YAML 1.2 has it)."""
    found: list[Override] = []
    for item in items or []:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*)*", key):
            raise FyexpError(f"--set: expected KEY=VALUE with KEY a dotted parameter path "
                             f"(e.g. train.optimizer.lr=1e-4), got '{item}'")
        if not text.strip():
            raise FyexpError(f"--set {key}: expected a value after '=', got '{text}'")
        if len(text) > MAX_SET_CHARS:
            raise FyexpError(f"--set {key}: a value of {len(text):,} characters; expected at most {MAX_SET_CHARS:,}")
        value = load_yaml(text, f"--set {key}")
        if isinstance(value, str) and re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+", value.strip()):
            value = float(value)  # PyYAML (YAML 1.1) reads 1e-4 as a string; the spec's authors mean a number
        if any(o.key == key for o in found):
            raise FyexpError(f"--set: key '{key}' is given twice")
        found.append(Override(key, value, text.strip()))
    return found


MAX_LABEL = 96   # characters of a variant label: a folder name (at most 255 bytes) and part of file names


def variant_label(profile: str, overrides: list[Override]) -> str:
    """``paper+lr=1e-4,rho=1.5``: the profile, then the overrides by last key (dotted where two share it), sorted,
    safe as a folder name; over :data:`MAX_LABEL` characters, cut and ended in ``-`` and 10 hex digits of SHA-256."""
    lasts = [o.key.rsplit(".", 1)[-1] for o in overrides]
    parts = sorted(f"{last if lasts.count(last) == 1 else o.key}={re.sub(r'[][ ]', '', o.text)}"
                   for o, last in zip(overrides, lasts))
    label = re.sub(r"[^A-Za-z0-9=._,+-]+", "-", f"{profile}+{','.join(parts)}")
    if len(label) <= MAX_LABEL:
        return label
    digest = hashlib.sha256(label.encode("utf-8")).hexdigest()[:10]
    return f"{label[:max(MAX_LABEL - 11, label.index('+') + 1)]}-{digest}"


def seed_ranges(seeds: list[int]) -> str:
    """``[0, 1, 2, 7, 9, 10]`` → ``'0-2,7,9-10'``: the seeds sorted, each run of consecutive ones ``low-high``."""
    runs = [[s for _, s in run] for _, run in itertools.groupby(enumerate(sorted(seeds)), lambda p: p[1] - p[0])]
    return ",".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)


def shown_override(key: str, value: Any) -> str:
    """An override's value in a cell's ``overrides`` column: seeds as runs (``0-99999``), else as Python writes it."""
    seeds = key == "seeds" and isinstance(value, list) and all(isinstance(s, int) for s in value)
    return seed_ranges(value) if seeds else str(value)


def parse_seeds(text: str | None) -> list[int] | None:
    """``--seeds`` as ``0,1,2``, a range ``0-4`` or both (``0-2,7``): distinct non-negative integers; ``None``."""
    if text is None:
        return None
    seeds: list[int] = []
    for part in text.split(","):
        part = part.strip()
        match = re.fullmatch(r"(-?[0-9]+)(?:-(-?[0-9]+))?", part)  # ASCII digits only (not '５')
        if not match:
            raise FyexpError(f"--seeds: expected non-negative integers like '0,1,2' or a range '0-4', got '{text}'")
        lo, hi = int(match[1]), int(match[2] or match[1])
        if lo < 0 or hi < 0:
            raise FyexpError(f"--seeds: seeds must be non-negative, got '{part}'")
        check_options({"--seeds": hi})
        if hi < lo:
            raise FyexpError(f"--seeds: the range '{part}' is empty (write it low-high, e.g. '{hi}-{lo}')")
        if len(seeds) + hi - lo + 1 > MAX_SEEDS:  # told before the list is built (0-4294967295: 4·10⁹ integers)
            raise FyexpError(f"--seeds: {len(seeds) + hi - lo + 1:,} seeds, more than the {MAX_SEEDS:,} a run may "
                             f"have, got '{text[:80]}'")
        seeds.extend(range(lo, hi + 1))
    if len(set(seeds)) != len(seeds):
        raise FyexpError(f"--seeds: a seed is repeated in '{text}'")
    return seeds


def hint_at(config_cls: type, path: str) -> Any:
    """The annotation of the config field at the dotted ``path`` (``train.optimizer.lr``)."""
    return functools.reduce(lambda hint, part: _type_hints(hint)[part], path.split("."), config_cls)


def check_search(search: dict, config_cls: type, tunable: tuple[str, ...] | None = None) -> None:
    """Raise :class:`ConfigValueError` for a search entry naming no config path (or none of ``tunable``), or a space
    Optuna would refuse only at the first trial (or draw from silently)."""
    for path, space in search.items():
        try:
            hint_at(config_cls, path)
        except (KeyError, TypeError, AttributeError):
            raise ConfigValueError(f"search.{path}", "a path of the config's parameters (e.g. train.optimizer.lr)",
                                   path) from None
        require(tunable is None or path in tunable, f"search.{path}", f"one of {list(tunable or ())}", path)
        require(isinstance(space, dict) and ("choices" in space or {"low", "high"} <= set(space)), f"search.{path}",
                "a mapping with 'choices', or 'low' and 'high' (and optionally 'log', 'step')", space)
        at = f"search.{path}."
        if "choices" in space:
            require(isinstance(space["choices"], list) and bool(space["choices"]), at + "choices",
                    "a non-empty list of values", space["choices"])
            continue
        low, high, log = space["low"], space["high"], space.get("log", False)
        for key in ("low", "high"):
            require(Interval(float, None, None).contains(space[key]), at + key, "a finite number", space[key])
        require(low <= high, at + "low", f"a number <= high ({high!r})", low)
        require(isinstance(log, bool), at + "log", "true or false", log)
        require(not log or low > 0, at + "low", "a number > 0 (the space has log: true)", low)
        if "step" in space:
            step = space["step"]
            require(Interval(float, 0, None, "neither").contains(step), at + "step", "a finite number > 0", step)
            require(not log, at + "step", "no step with log: true (Optuna draws a log scale without one)", step)
