"""YAML experiment specs → validated, resolved configurations.

A spec file ``experiments/<name>.yaml`` looks like::

    name: gmm-clustering          # must equal the file name
    title: FY-EM for Gaussian mixtures
    runner: gmm_clustering        # a registered runner (RUNNERS below, or a module in $FYEXP_RUNNERS)
    paper: fyvi
    tables: ["fyvi Table 1"]
    figures: ["fyvi Figure 1", "fyvi Figure 2"]   # what the paper calls them (for `fyexp list`)
    plots: [fyvi-figure1, fyvi-figure2]    # figure functions of fyexp.report.figures, each `name` or `{name: {options}}`
    description: ...
    defaults:                     # parameters shared by every profile
      n_iter: 200
    profiles:
      paper: {seeds: [0, 1, 2, 3, 4]}
      quick: {seeds: [0, 1], n_iter: 20}

A profile is ``defaults`` deep-merged with ``profiles[<profile>]``.  The reserved key ``seeds`` (a list of
integers) is read by the framework; every other key must be a field of the runner's ``Config`` dataclass and
is type-checked against its annotation.  Every problem raises :class:`fyexp.core.errors.SpecError`, which names the
file, the key and what was expected.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import re
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fyexp.core.constraints import conforms, describe, settings
from fyexp.core.domains import MAX_SEED, check_options, spec_value_problem
from fyexp.core.errors import ConfigValueError, FyexpError, SpecError

MAX_SEEDS = 100_000   # seeds one --seeds may name (a paper profile has at most 10)

# ---- the registry's names: a spec's runner is one of these, never a module path read from the file ------------
# the runners fyexp ships: each names fyexp/experiments/<runner>.py, which registers one experiment
# (tests/cli/test_untrusted_inputs.py checks this table against the package's modules)
RUNNERS = ("frac_vae", "fy_vae", "gmm_calibration", "gmm_clustering", "nvdm", "tvem_bsc", "vr_bnn",
           "vr_renyi_gaussians", "vr_vae")
EXTRA_RUNNERS_ENV = "FYEXP_RUNNERS"


def extra_runners() -> tuple[str, ...]:
    """The dotted module paths that ``$FYEXP_RUNNERS`` adds to :data:`RUNNERS`: the user's own runners (e.g.
    ``tests.toy_experiment``), trusted as ``PYTHONPATH`` is, since whoever runs fyexp sets it, not a file it reads."""
    return tuple(name.strip() for name in os.environ.get(EXTRA_RUNNERS_ENV, "").split(",") if name.strip())


def known_runners() -> tuple[str, ...]:
    """Every name a spec's ``runner`` may take: :data:`RUNNERS`, then :func:`extra_runners`."""
    return RUNNERS + tuple(name for name in extra_runners() if name not in RUNNERS)


def check_runner(runner: object, source: object = "spec") -> str:
    """``runner`` when it is a known runner (:func:`known_runners`); else :class:`fyexp.core.errors.SpecError` naming
    ``source`` (the spec file), the key ``runner`` and the known runners.  Nothing is imported."""
    known = known_runners()
    if not isinstance(runner, str) or runner not in known:
        raise SpecError(source, "runner", f"one of the registered runners {', '.join(known)} (a runner of your "
                        f"own: name its module in ${EXTRA_RUNNERS_ENV})", runner)
    return runner


@settings
class TopLevel:
    """The top-level keys of a spec file, checked by :func:`build_config` like a profile's parameters."""

    name: str
    title: str
    runner: str
    profiles: dict
    paper: str = ""
    tables: list[str] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)
    plots: list = field(default_factory=list)
    description: str = ""
    defaults: dict = field(default_factory=dict)


def experiments_dir() -> Path:
    """The folder of spec files: ``$FYEXP_EXPERIMENTS_DIR``, else ``./experiments``, else the source tree's.
    ``FYEXP_EXPERIMENTS_DIR`` set to an empty value is an error (a variable meant to name a folder that names
    none), not a silent fall back to another folder's specs."""
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
    """A spec file as written: metadata plus raw, not yet validated profiles."""

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
    """``yaml.SafeLoader`` that refuses a key given twice in one mapping (PyYAML keeps the last silently); parsed
    by libyaml where PyYAML has it (``fyexp list`` reads every spec: ~10× faster than the pure-Python parser)."""

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


# ---- YAML read as bounded data ----------------------------------------------------------------------------------
MAX_SPEC_BYTES = 1 << 20      # a spec file (the largest shipped: ~10 KB)
MAX_SET_CHARS = 1 << 14       # the value of one --set
MAX_YAML_DEPTH = 32           # nested mappings and lists (a shipped spec: at most 6)
MAX_YAML_NODES = 100_000      # values once every alias is expanded (a shipped spec: ~1,000)


def yaml_bound_problem(text: str) -> str | None:
    """What makes ``text`` too large to read as a spec value, or None: more than :data:`MAX_YAML_DEPTH` nested
    collections, more than :data:`MAX_YAML_NODES` values once its aliases are expanded (a "billion laughs" alias
    bomb is a few hundred bytes that expand to 10⁹ values), or an alias of a collection inside itself.

    One pass over the parser's events (PyYAML's parser is iterative: 200,000 nested ``[`` stop at depth
    :data:`MAX_YAML_DEPTH` + 1, no recursion), counting each anchored node's expanded size once; a text that does
    not parse is left to the loader, whose error names the line.
    """
    sizes: dict[str, int] = {}
    open_nodes: list[list] = []   # per open collection: [anchor, expanded size so far]
    total = 0
    try:
        for event in yaml.parse(text, Loader=_StrictLoader):
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                if len(open_nodes) >= MAX_YAML_DEPTH:
                    return f"nested deeper than {MAX_YAML_DEPTH} levels"
                open_nodes.append([event.anchor, 1])
                continue
            if isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
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
            if open_nodes:
                open_nodes[-1][1] += size
            else:
                total += size
            if total + sum(n for _, n in open_nodes) > MAX_YAML_NODES:
                return f"more than {MAX_YAML_NODES:,} values once its aliases are expanded"
    except yaml.YAMLError:
        return None
    return None


def _read_yaml(path: Path) -> dict:
    try:
        if path.stat().st_size > MAX_SPEC_BYTES:
            raise FyexpError(f"{path}: a spec file of {path.stat().st_size:,} bytes; expected at most "
                             f"{MAX_SPEC_BYTES:,}")
        with open(path, "rb") as handle:     # a regular file (load_spec checks): no blocking read
            raw = handle.read(MAX_SPEC_BYTES + 1)
    except OSError as exc:
        raise FyexpError(f"{path}: cannot read spec file ({exc.strerror})") from None
    if len(raw) > MAX_SPEC_BYTES:           # grew since stat
        raise FyexpError(f"{path}: a spec file of more than {MAX_SPEC_BYTES:,} bytes; expected at most that")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise FyexpError(f"{path}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at line {line}); "
                         f"save the spec as UTF-8") from None
    problem = yaml_bound_problem(text)
    if problem is not None:
        raise FyexpError(f"{path}: not read as a spec: its YAML is {problem}")
    try:
        data = yaml.load(text, Loader=_StrictLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise FyexpError(f"{path}: not valid YAML{where}: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(data, dict):
        raise SpecError(path, "<top level>", "a mapping of keys to values", type(data).__name__)
    return data


def available_specs(directory: Path | None = None) -> list[str]:
    """Names of the experiments with a spec file in ``directory``."""
    directory = directory or experiments_dir()
    return sorted(p.stem for p in directory.glob("*.yaml"))


def load_spec(name: str, directory: Path | None = None) -> ExperimentSpec:
    """Read and check the top level of ``experiments/<name>.yaml``."""
    directory = directory or experiments_dir()
    path = directory / f"{name}.yaml"
    if not path.is_file():
        known = ", ".join(available_specs(directory)) or "none"
        raise FyexpError(f"unknown experiment '{name}': no {path} (known experiments: {known})")
    top = build_config(TopLevel, _read_yaml(path), path, "", generic_rule=False)
    if top.name != name:
        raise SpecError(path, "name", f"'{name}' (the file's name)", top.name)
    check_runner(top.runner, path)   # looked up in the registry, never imported as written
    for profile, overrides in top.profiles.items():
        if not isinstance(overrides, dict):
            raise SpecError(path, f"profiles.{profile}", "a mapping of parameters", overrides)
    return ExperimentSpec(name=top.name, title=top.title, runner=top.runner, path=path, paper=top.paper,
                          tables=tuple(top.tables), figures=tuple(top.figures), plots=_check_plots(top.plots, path),
                          description=top.description, defaults=top.defaults, profiles=top.profiles)


def _check_plots(entries: list, path: Path) -> tuple[tuple[str, dict], ...]:
    """``plots:`` → (figure name, options) pairs, each name one of :mod:`fyexp.spec.plots` (the figures that
    :mod:`fyexp.report.figures` registers; the report is not imported to check a spec)."""
    if not entries:
        return ()
    from fyexp.spec.plots import check_plot

    checked = []
    for i, entry in enumerate(entries):
        try:
            checked.append(check_plot(entry))
        except ConfigValueError as exc:
            raise SpecError(path, f"plots[{i}]", exc.expected, exc.got) from None
    return tuple(checked)


def deep_merge(base: dict, override: dict) -> dict:
    """``base`` updated by ``override``, recursing into nested mappings."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def get_path(obj: Any, path: str) -> Any:
    """The value at a dotted path of nested dataclasses (``train.optimizer.lr``), the paths of ``--set`` and of a
    tuning study's ``search`` space."""
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _coerce(value: Any, hint: Any) -> Any:
    """Turn YAML lists into tuples where the annotation asks for a tuple; ints into floats for floats."""
    origin = typing.get_origin(hint)
    if hint is float and isinstance(value, int):
        return float(value)
    if origin is tuple and isinstance(value, list):
        return tuple(value)
    if origin is list and isinstance(value, list):
        args = typing.get_args(hint)
        return [_coerce(v, args[0]) for v in value] if args else list(value)
    return value


def _dataclass_of(hint: Any) -> type | None:
    """The dataclass a field is annotated with (``Cfg`` or ``Cfg | None``), or None."""
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return hint
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        classes = [a for a in typing.get_args(hint) if dataclasses.is_dataclass(a) and isinstance(a, type)]
        return classes[0] if len(classes) == 1 else None
    return None


@functools.lru_cache(maxsize=None)
def _type_hints(cls: type) -> dict:
    """``typing.get_type_hints(cls)`` once per class: evaluating a class's annotations (strings, as
    ``from __future__ import annotations`` leaves them) costs about a millisecond, and ``list`` resolves every
    profile of every spec."""
    return typing.get_type_hints(cls)


def build_config(config_cls: type, values: dict, path: Path, where: str, generic_rule: bool = True) -> Any:
    """Validate ``values`` against the dataclass ``config_cls`` and instantiate it.

    A field annotated with a dataclass is a nested block (e.g. ``train:`` → ``TrainConfig``, whose ``optimizer:``
    is an ``OptimizerConfig``), built recursively; every error names the full key path
    (``profiles.paper.train.optimizer.lr``; ``where`` empty: the file's top level).  Each value obeys its declared
    type and domain (:mod:`fyexp.core.constraints`) and, with ``generic_rule``, the rule of every spec value
    (:func:`fyexp.core.domains.spec_value_problem`); a spec's top level goes without it, as its profiles are checked,
    key by key, when they resolve."""
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
        value = values[name]
        nested = _dataclass_of(hints[name])
        if nested is not None and isinstance(value, dict):
            if not value and getattr(nested, "__empty__", None):   # a grid: {} has no cell, not the default grid
                raise SpecError(path, at(name), nested.__empty__, value)
            kwargs[name] = build_config(nested, value, path, at(name))
            continue
        if not conforms(value, hints[name]):
            raise SpecError(path, at(name), describe(hints[name]), value)
        default = fld.default_factory() if fld.default_factory is not dataclasses.MISSING else fld.default
        problem = spec_value_problem(value, default) if generic_rule else None
        if problem is not None:
            raise SpecError(path, at(name), problem, value)
        kwargs[name] = _coerce(value, hints[name])
    try:
        config = config_cls(**kwargs)
        search = kwargs.get("search")
        if search and isinstance(search, dict):   # a tuning study's space, for every tuned experiment (`fyexp tune`,
            check_search(search, config_cls)       # its plan, `run --best`): refused here, never at the first trial
        return config
    except ConfigValueError as exc:
        raise SpecError(path, at(exc.key), exc.expected, exc.got) from None


def resolve(spec: ExperimentSpec, profile: str, config_cls: type, seeds: list[int] | None = None,
            overrides: "list[Override] | None" = None) -> ResolvedSpec:
    """Merge ``defaults`` with ``profiles[profile]``, apply the ``--set`` ``overrides`` (:func:`parse_sets`),
    validate it, and apply a ``--seeds`` override.

    With overrides the result is a *variant* of the profile: its ``profile`` is :func:`variant_label`
    (``paper+lr=1e-4``, so its cells, rows and report tables never mix with the plain profile's) and ``base`` the
    spec's profile.  An override that does not validate is reported as ``--set: key '<dotted key>': expected ...``.
    """
    if profile not in spec.profiles:
        raise SpecError(spec.path, "profiles", f"a profile named one of {spec.profile_names()}", profile)
    merged = deep_merge(spec.defaults, spec.profiles[profile])
    where = f"profiles.{profile}"
    overrides = list(overrides or [])
    for override in overrides:
        _apply_override(merged, override)
    try:
        raw_seeds = merged.pop("seeds", [0])
        if (not conforms(raw_seeds, list[int]) or not raw_seeds or min(raw_seeds) < 0
                or max(raw_seeds) > MAX_SEED or len(set(raw_seeds)) != len(raw_seeds)):
            raise SpecError(spec.path, f"{where}.seeds",
                            f"a non-empty list of distinct non-negative integers (at most {MAX_SEED})", raw_seeds)
        config = build_config(config_cls, merged, spec.path, where)
    except SpecError as exc:
        key = exc.key[len(where) + 1:] if exc.key.startswith(where + ".") else exc.key
        if any(key == o.key or key.startswith(o.key + ".") or o.key.startswith(key + ".") for o in overrides):
            raise SpecError("--set", key, exc.expected, exc.got) from None
        raise
    chosen = tuple(seeds) if seeds is not None else tuple(raw_seeds)
    if not overrides:
        return ResolvedSpec(spec=spec, profile=profile, seeds=chosen, config=config,
                            raw={**merged, "seeds": list(chosen)})
    return ResolvedSpec(spec=spec, profile=variant_label(profile, overrides), seeds=chosen, config=config,
                        raw={**merged, "seeds": list(chosen)}, overrides=tuple((o.key, o.value) for o in overrides),
                        base=profile)


def resolve_variant(spec: ExperimentSpec, profile: str, config_cls: type, seeds: "list[int] | None",
                    overrides: "list[Override] | None" = None) -> ResolvedSpec:
    """:func:`resolve` as ``fyexp run --seeds`` resolves: ``seeds`` other than the profile's (as a set) are the
    override ``seeds=[...]`` labelled by :func:`seed_ranges` and make a *variant* (``paper+seeds=0-9``), whose rows
    and verdicts never mix with the profile's; the profile's own seeds (in any order), or ``None``, are the profile
    itself.  (A part of the profile's seeds is ``--only seed=0,1``, not a variant.)"""
    overrides = list(overrides or [])
    if seeds is not None:
        if set(seeds) != set(resolve(spec, profile, config_cls, None, overrides).seeds):
            overrides.append(Override("seeds", list(seeds), seed_ranges(list(seeds))))
    return resolve(spec, profile, config_cls, None, overrides)


# ---- --set KEY=VALUE -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Override:
    """One ``--set KEY=VALUE``: a dotted path into the merged profile and its value parsed as YAML."""

    key: str
    value: Any
    text: str   # the value as typed, for labels


def parse_sets(items: list[str] | None) -> list[Override]:
    """``["train.optimizer.lr=1e-4", "grid.latent_rho=1.5"]`` → overrides; the value is read as YAML (``1e-4`` a
    number, as YAML 1.2 reads it, ``true`` a boolean, ``[1, 2]`` a list, ``null`` none, for a setting that may
    be unset).  An empty value, or a key given twice, is an error."""
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
        problem = yaml_bound_problem(text)
        if problem is not None:
            raise FyexpError(f"--set {key}: the value is not read: its YAML is {problem}")
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError:
            raise FyexpError(f"--set {key}: the value '{text}' is not a YAML value") from None
        if isinstance(value, str) and re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+", value.strip()):
            value = float(value)  # PyYAML (YAML 1.1) reads 1e-4 as a string; the spec's authors mean a number
        if any(o.key == key for o in found):
            raise FyexpError(f"--set: key '{key}' is given twice")
        found.append(Override(key, value, text.strip()))
    return found


def _apply_override(merged: dict, override: Override) -> None:
    """Set ``override.key`` (dotted) in ``merged``, creating nested mappings on the way."""
    node = merged
    parts = override.key.split(".")
    for i, part in enumerate(parts[:-1]):
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        elif not isinstance(child, dict):
            raise SpecError("--set", ".".join(parts[: i + 1]), "a mapping of parameters to descend into", child)
        else:
            child = node[part] = dict(child)
        node = child
    node[parts[-1]] = override.value


MAX_LABEL = 96   # characters of a variant label: a folder name (at most 255 bytes) and part of file names


def variant_label(profile: str, overrides: list[Override]) -> str:
    """``paper+lr=1e-4,rho=1.5``: the profile, then each override by its last key (the full dotted key where two
    overrides share a last key), sorted; safe as a folder name.  A label longer than :data:`MAX_LABEL` keeps its
    readable start and ends in ``-`` and 10 hex digits of its SHA-256 (distinct variants stay distinct); the
    overrides in full are in every cell's settings (:func:`fyexp.spec.settings.cell_settings`)."""
    lasts = [o.key.rsplit(".", 1)[-1] for o in overrides]
    parts = sorted(f"{last if lasts.count(last) == 1 else o.key}={re.sub(r'[][ ]', '', o.text)}"
                   for o, last in zip(overrides, lasts))
    label = re.sub(r"[^A-Za-z0-9=._,+-]+", "-", f"{profile}+{','.join(parts)}")
    if len(label) <= MAX_LABEL:
        return label
    import hashlib

    digest = hashlib.sha256(label.encode("utf-8")).hexdigest()[:10]
    return f"{label[:max(MAX_LABEL - 11, label.index('+') + 1)]}-{digest}"


def seed_ranges(seeds: list[int]) -> str:
    """``[0, 1, 2, 7, 9, 10]`` → ``'0-2,7,9-10'``: the seeds sorted, each run of consecutive ones ``low-high``."""
    runs: list[list[int]] = []
    for seed in sorted(seeds):
        if runs and seed == runs[-1][-1] + 1:
            runs[-1].append(seed)
        else:
            runs.append([seed])
    return ",".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)


def shown_override(key: str, value: Any) -> str:
    """An override's value as a cell's ``overrides`` column shows it: seeds as runs (``seeds=0-99999``, not the list
    of 100,000, which no CSV reader takes as one field), any other value as Python writes it."""
    if key == "seeds" and isinstance(value, list) and all(isinstance(s, int) for s in value):
        return seed_ranges(value)
    return str(value)


def parse_seeds(text: str | None) -> list[int] | None:
    """Parse ``--seeds`` as ``0,1,2``, a range ``0-4`` or both (``0-2,7``); ``None`` keeps the profile's.

    Seeds are non-negative integers (NumPy and scikit-learn refuse negative ones); a range must not be empty
    (``3-1`` is an error, not "no override"), and no seed may repeat.
    """
    if text is None:
        return None
    usage = "expected non-negative integers like '0,1,2' or a range '0-4'"
    if not text.strip():
        raise FyexpError(f"--seeds: {usage}, got an empty value")
    seeds: list[int] = []
    for part in text.split(","):
        part = part.strip()
        match = re.fullmatch(r"(-?[0-9]+)(?:-(-?[0-9]+))?", part)  # ASCII digits only (not '５')
        if not match:
            raise FyexpError(f"--seeds: {usage}, got '{text}'")
        lo = int(match.group(1))
        hi = int(match.group(2)) if match.group(2) is not None else lo
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


# ---- a tuning study's search space (checked when the spec is read: fyexp.spec.tuning draws from it) ----------
def hint_at(config_cls: type, path: str) -> Any:
    """The annotation of the config field at the dotted ``path`` (``train.optimizer.lr``)."""
    hint: Any = config_cls
    for part in path.split("."):
        hint = typing.get_type_hints(hint)[part]
    return hint


def check_search(search: dict, config_cls: type, tunable: tuple[str, ...] | None = None) -> None:
    """Raise :class:`fyexp.core.errors.ConfigValueError` for a search entry that names no config path or is
    malformed."""
    for path, space in search.items():
        try:
            hint_at(config_cls, path)
        except (KeyError, TypeError, AttributeError):
            raise ConfigValueError(f"search.{path}", "a path of the config's parameters (e.g. train.optimizer.lr)",
                                   path) from None
        if tunable is not None and path not in tunable:
            raise ConfigValueError(f"search.{path}", f"one of {list(tunable)}", path)
        if not (isinstance(space, dict) and ("choices" in space or {"low", "high"} <= set(space))):
            raise ConfigValueError(f"search.{path}", "a mapping with 'choices', or 'low' and 'high' (and optionally "
                                   "'log', 'step')", space)
        problem = _space_problem(space)
        if problem is not None:
            key, expected, got = problem
            raise ConfigValueError(f"search.{path}.{key}", expected, got)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _space_problem(space: dict) -> tuple[str, str, Any] | None:
    """``(key, expected, got)`` for the first entry of one search space that Optuna would refuse only at the first
    trial (or draw from silently): choices a non-empty list; low and high finite numbers, low <= high; a log scale
    only over low > 0; a step a finite number > 0.  None when the space is well formed."""
    if "choices" in space:
        choices = space["choices"]
        if not isinstance(choices, list) or not choices:
            return "choices", "a non-empty list of values", choices
        return None
    low, high = space["low"], space["high"]
    for key, value in (("low", low), ("high", high)):
        if not _number(value):
            return key, "a finite number", value
    if low > high:
        return "low", f"a number <= high ({high!r})", low
    if "log" in space and not isinstance(space["log"], bool):
        return "log", "true or false", space["log"]
    if space.get("log") and low <= 0:
        return "low", "a number > 0 (the space has log: true)", low
    if "step" in space:
        step = space["step"]
        if not _number(step) or step <= 0:
            return "step", "a finite number > 0", step
        if space.get("log"):
            return "step", "no step with log: true (Optuna draws a log scale without one)", step
    return None
