"""What ``fyexp list`` and ``fyexp show`` say about an experiment before its settings: per profile, its cells, its
methods, data sets and the time it took before (no runner, torch or pandas is imported: both commands stay fast).

A profile's cells are :func:`fyexp.experiments.declared.declared_cells`; its estimate is that of ``fyexp run``'s plan
(:mod:`fyexp.run.estimate` over every cell of the profile, the epochs from the runner's light config module), with,
apart, the scaled time of the cells no recorded cell of the profile estimates (called an extrapolation); ``fyexp
list`` ends with this machine's speed factor.  ``fyexp list`` lays each experiment out as a block of lines wrapped
between words (:func:`list_blocks`), so that no word is ever split, at any width of 60 columns or more.
"""

from __future__ import annotations

import functools
import textwrap
from dataclasses import dataclass, field, replace
from pathlib import Path

from fyexp.core.words import counted, duration
from fyexp.run.estimate import (estimate_cells, extrapolated_text, recorded_factor, recorded_inputs, scaled_text,
                                source_text, times_as_recorded, unknown_text)


@dataclass
class ProfileSummary:
    name: str
    cells: int
    seeds: tuple[int, ...]
    estimate_s: float | None
    recorded: int
    methods: dict[str, int] = field(default_factory=dict)        # method → cells ("" where the runner names it)
    axes: dict[str, list] = field(default_factory=dict)          # every grid parameter → its values, in order
    methods_axes: dict[str, dict[str, list]] = field(default_factory=dict)
    unestimated: int = 0     # cells on data no recorded cell of the profile used: not in estimate_s
    extrapolated: int = 0    # cells estimated from recorded cells that all differ from them in a setting
    extrapolated_keys: tuple[str, ...] = ()  # those settings
    source: str = ""         # where the recorded times were read (fyexp.run.estimate.source_text says it in words)
    scaled_s: float | None = None  # of the unestimated cells: the time scaled from another profile's cells
    scaled: int = 0          # how many of them have one
    scaled_from: tuple[str, ...] = ()  # the profiles scaled from
    scaled_source: str = ""  # where the records scaled from were read

    def at_speed(self, factor_of=recorded_factor) -> ProfileSummary:
        """The summary with its times on this machine: ``estimate_s`` and ``scaled_s`` as recorded (what
        :func:`summary_as_recorded` gives and the user cache keeps) × :func:`fyexp.run.estimate.recorded_factor` of the
        folder each was read from (this machine's speed for the project's times, 1 for a folder of this machine);
        ``factor_of``: that function, or a cached copy of it (:func:`profile_summaries` scales many summaries)."""
        def scaled(seconds: float | None, folder: str) -> float | None:
            return seconds * factor_of(folder or None) if seconds is not None else None

        return replace(self, estimate_s=scaled(self.estimate_s, self.source),
                       scaled_s=scaled(self.scaled_s, self.scaled_source))

    @property
    def datasets(self) -> list:
        return self.axes.get("dataset", [])

    def line(self) -> str:
        """``paper (60 cells, 30.7 h)``, its spaces non-breaking: :func:`list_blocks` keeps it on one line.  The
        cells no recorded cell of the profile estimates add their scaled time (``+ ~706 h scaled``, alone where no
        cell has a recorded estimate: ``~158,000 h scaled``) where another profile's cells scale them, else are
        counted unknown."""
        known = duration(self.estimate_s) if self.estimate_s is not None else None
        scaled = f"~{duration(self.scaled_s)} scaled" if self.scaled and self.scaled_s is not None else None
        rest = self.unestimated - (self.scaled if scaled else 0)
        parts = [p for p in (known, scaled) if p]
        when = " + ".join(parts) if parts else "time unknown"
        if parts and rest > 0:
            when = f"{when} + {rest} unknown"
        return f"{self.name} ({counted(self.cells)}, {when})".replace(" ", "\u00a0")


def _values(cells, key: str) -> list:
    return list(dict.fromkeys(str(c.params[key]) for c in cells if c.params.get(key) is not None))


def summarize(spec, resolved, results_dir: Path, scaled: bool = False, inputs=None) -> ProfileSummary:
    """The summary of one resolved profile of ``spec``, its times on this machine
    (:meth:`ProfileSummary.at_speed` of :func:`summary_as_recorded`)."""
    return summary_as_recorded(spec, resolved, results_dir, scaled, inputs).at_speed()


def summary_as_recorded(spec, resolved, results_dir: Path, scaled: bool = False, inputs=None) -> ProfileSummary:
    """The summary of one resolved profile of ``spec``, its times as recorded (the estimates are sums and means of
    recorded seconds, linear in them: :meth:`ProfileSummary.at_speed` scales them after); with ``scaled``
    (``fyexp list``, ``fyexp show``), the cells without a recorded time are scaled from another profile's cells as
    the plan scales them (:func:`fyexp.run.estimate.scaled_cells_as_recorded`, through the runner's light config
    module: no runner import).  ``inputs``: a callable giving :func:`fyexp.run.estimate.recorded_inputs` of
    ``results_dir`` (``list`` asks once for every experiment: hashing fyexp's files is a fifth of a second)."""
    from fyexp.experiments.declared import declared_cells

    cells = declared_cells(resolved.config, resolved.seeds)
    profiles = list(dict.fromkeys([resolved.profile, getattr(resolved, "base_profile", resolved.profile)]))
    times, folder = times_as_recorded(results_dir, spec.name, profiles, with_epochs=True)
    methods: dict[str, int] = {}
    per_method: dict[str, list] = {}
    for c in cells:
        methods[c.method or ""] = methods.get(c.method or "", 0) + 1
        per_method.setdefault(c.method or "", []).append(c)
    keys = list(dict.fromkeys(k for c in cells for k in c.params))
    names, params = [c.method or "" for c in cells], [c.params for c in cells]
    found = estimate_cells(names, times, cell_epochs(spec.runner, resolved.config, cells), params)
    scaled_s, scaled_n, scaled_from, scaled_source = None, 0, (), ""
    if scaled and found.unestimated:
        from fyexp.run.estimate import LightWork, scaled_cells_as_recorded

        light = LightWork.of(spec.runner)
        if light is not None:
            scaled_s, scaled_n, scaled_from, scaled_source = _remembered_scaled(
                spec, resolved, results_dir, found.unestimated,
                lambda: scaled_cells_as_recorded([cells[i] for i in found.unestimated], resolved, light,
                                                 results_dir), inputs)
    return ProfileSummary(resolved.profile, len(cells), tuple(resolved.seeds), found.seconds, len(times), methods,
                          {k: _values(cells, k) for k in keys},
                          {m: {k: _values(cs, k) for k in dict.fromkeys(k for c in cs for k in c.params)}
                           for m, cs in per_method.items()}, len(found.unestimated), found.extrapolated, found.keys,
                          str(folder) if folder is not None else "", scaled_s, scaled_n, scaled_from, scaled_source)


def cell_epochs(runner: str, config, cells) -> list[int | None] | None:
    """Each of ``cells``' training epochs at ``config`` as the spec gives it now
    (:func:`fyexp.spec.settings.cells_training_epochs` through the runner's light config module: no runner import);
    ``None`` for a runner without a light module.  :func:`fyexp.run.estimate.estimate_cells` scales each
    recorded time by E(cell) / E(recorded) with them, as the plan does (:func:`fyexp.run.plan.run_plan`), so that
    ``list``, ``show`` and the plan give one figure when a profile's epochs change."""
    from fyexp.experiments import get_config_module
    from fyexp.spec.settings import cells_training_epochs

    module = get_config_module(runner)
    return None if module is None else cells_training_epochs(module, config, cells)


def _remembered_scaled(spec, resolved, results_dir: Path, positions, derive, inputs=None):
    """``derive()`` (the scaled figure of the cells at ``positions``, as recorded, and the folder read: reading every
    other profile's cell files and each cell's scoped config takes seconds), kept in the user cache (kind
    ``show-scaled``) under :func:`fyexp.run.estimate.recorded_inputs` (the package, the specs, the results folders; not
    this machine's speed, applied after) and the resolved profile's settings; computed afresh where nothing is cached
    (a runner outside fyexp)."""
    import hashlib
    import json

    from fyexp.store.plain import jsonable
    from fyexp.store.user_cache import remembered

    def plain() -> list:   # what is kept: plain values, the folder as text
        seconds, count, profiles, folder = derive()
        return [seconds, count, list(profiles), str(folder) if folder is not None else ""]

    inputs = inputs() if inputs is not None else recorded_inputs(results_dir, None)
    if inputs is None:
        found = plain()
    else:
        settings = hashlib.sha256(json.dumps(jsonable(resolved.config), sort_keys=True, default=str).encode())
        name = repr((spec.name, resolved.profile, str(Path(results_dir).resolve())))
        key = (inputs, settings.hexdigest(), tuple(resolved.seeds), tuple(positions))
        found = remembered("show-scaled", name, key, plain)
    seconds, count, profiles, folder = found
    return seconds, count, tuple(profiles), folder


def profile_summaries(spec, results_dir: Path, inputs=None, kept=None) -> list[ProfileSummary]:
    """Every profile of ``spec``, summarized with the scaled time of its unestimated cells (:func:`summarize`) and
    scaled to this machine as they are read (:meth:`ProfileSummary.at_speed`); a profile that does not resolve is
    left out.  ``inputs`` and ``kept``: as :func:`summaries_as_recorded` takes them."""
    factor_of = functools.cache(recorded_factor)   # this machine's speed looked up once per folder, not per summary
    return [summary.at_speed(factor_of) for summary in summaries_as_recorded(spec, results_dir, inputs, kept)]


def summaries_as_recorded(spec, results_dir: Path, inputs=None, kept=None) -> list[ProfileSummary]:
    """Every profile of ``spec`` summarized as recorded (:func:`summary_as_recorded`, scaled figures included).

    They are kept in the user cache (kind ``list-summaries``: ``fyexp list`` at a terminal and ``--json``
    summarize every profile of every experiment, some 750 reads of cell files) under
    :func:`fyexp.run.estimate.recorded_inputs` (fyexp's files, the specs, every file of the results folders, the library
    versions; not this machine's speed, so a new calibration keeps them) and the spec itself as loaded (the
    ``--experiments-dir`` one too).  On a miss they are read from the summaries ``fyexp report`` kept beside the
    results (:mod:`fyexp.run.kept_summaries`: a fresh clone), else derived; computed afresh where nothing is cached (a
    runner outside fyexp).  ``inputs``: a callable giving :func:`fyexp.run.estimate.recorded_inputs` of ``results_dir``;
    ``kept``: a callable giving :func:`fyexp.run.kept_summaries.read_kept` of it (called on a miss only)."""
    from fyexp.run.kept_summaries import spec_digest
    from fyexp.store.user_cache import remembered

    if inputs is None:
        key = recorded_inputs(results_dir, None)
        inputs = lambda: key   # noqa: E731 (the same key for the scaled figures within)
    key = inputs()
    if key is None:
        return _profile_summaries(spec, results_dir, inputs)
    spec_key = spec_digest(spec)

    def derive() -> list[ProfileSummary]:
        digest, found = (kept() if kept is not None else {}).get(spec.name, ("", None))
        return found if digest == spec_key and found is not None else _profile_summaries(spec, results_dir, inputs)

    name = repr((spec.name, str(results_dir), str(Path(results_dir).resolve())))
    return remembered("list-summaries", name, (key, spec_key), derive)


def _profile_summaries(spec, results_dir: Path, inputs=None) -> list[ProfileSummary]:
    from fyexp.core.errors import FyexpError
    from fyexp.experiments import get_config_class
    from fyexp.spec.specs import resolve

    config_class = get_config_class(spec.runner)
    out = []
    for name in spec.profile_names():
        try:
            out.append(summary_as_recorded(spec, resolve(spec, name, config_class, None, ()), results_dir,
                                           scaled=True, inputs=inputs))
        except FyexpError:
            continue
    return out


def _axes_text(axes: dict[str, list]) -> str:
    return "; ".join(f"{k} {', '.join(v)}" for k, v in axes.items() if v) or "no grid parameters"


def show_summary(spec, summary: ProfileSummary) -> list[str]:
    """The lines ``fyexp show`` opens with (YAML comments, so the output stays valid YAML)."""
    seeds = ", ".join(map(str, summary.seeds))
    if summary.estimate_s is None:
        when = unknown_text(summary.recorded)
    elif summary.unestimated:
        when = (f"estimate {duration(summary.estimate_s)} for {counted(summary.cells - summary.unestimated)} "
                f"from {counted(summary.recorded, 'recorded cell')}, unknown for {summary.unestimated} on data "
                f"none of them used")
    else:
        when = f"estimate {duration(summary.estimate_s)} from {counted(summary.recorded, 'recorded cell')}"
    if summary.estimate_s is not None and summary.source:
        when += f"; times {source_text(summary.source)}"
    if summary.estimate_s is not None and summary.extrapolated:
        when += f"; {extrapolated_text(summary.extrapolated, summary.extrapolated_keys)}"
    if summary.scaled:   # the cells without a recorded time, scaled as the plan scales them: the plan's figure
        when += f"; {scaled_text(summary.scaled_s, summary.scaled, summary.scaled_from)}"
    lines = [f"{spec.name} [{summary.name}]: {counted(summary.cells)} "
             f"({'seed' if len(summary.seeds) == 1 else 'seeds'} {seeds}); {when}"]
    named = {m: n for m, n in summary.methods.items() if m}
    if named:
        lines.append("methods:")
        lines += [f"  {m}: {counted(n)} ({_axes_text(summary.methods_axes[m])})" for m, n in named.items()]
    else:
        lines.append(f"cells vary over: {_axes_text(summary.axes)}")
    lines.append("data sets: " + (", ".join(summary.datasets) if summary.datasets
                                  else "none named in the grid (see the description)"))
    return ["# " + line for line in lines]


def list_blocks(specs: list, summaries: dict[str, list[ProfileSummary]], width: int) -> list[str]:
    """``fyexp list`` at a terminal of ``width`` columns (≥ 60): per experiment its name and title, what it
    reproduces and its profiles, each wrapped between words (a word longer than a line is kept whole)."""
    indent = " " * 4
    out: list[str] = []

    def wrap(text: str, first: str, rest: str) -> list[str]:
        return textwrap.wrap(text, width=width, initial_indent=first, subsequent_indent=rest,
                             break_long_words=False, break_on_hyphens=False) or [first.rstrip()]

    for spec in specs:
        out += wrap(f"{spec.name} — {spec.title}", "", indent)
        refs = [r.replace(" ", "\u00a0") if len(r) <= 20 else r for r in spec.tables + spec.figures]  # "vr Table 1"
        out += wrap("; ".join(refs) or "no published table or figure", indent + "reproduces: ", indent * 2)
        profiles = [s.line() for s in summaries.get(spec.name, [])] or [", ".join(spec.profile_names())]
        out += wrap(" · ".join(profiles), indent + "profiles: ", indent * 2)
        out.append("")
    return out[:-1]


# ---- the output of `fyexp list` and `fyexp show` -------------------------------------------------------------------
def specs_of(experiments_dir: Path | None) -> list:
    """Every spec of ``experiments_dir`` (the shipped ones by default), loaded."""
    from fyexp.spec.specs import available_specs, load_spec

    return [load_spec(name, experiments_dir) for name in available_specs(experiments_dir)]


def keep_summaries(results_dir: Path, experiments_dir: Path | None) -> Path | None:
    """Keep every experiment's summaries as recorded beside the results (:func:`fyexp.run.kept_summaries.write_kept`:
    ``fyexp report`` does, for a fresh clone's ``list`` and ``show``); the path written, or ``None``."""
    from fyexp.run.kept_summaries import spec_digest, write_kept

    def derive() -> dict[str, tuple[str, list]]:
        return {spec.name: (spec_digest(spec), summaries_as_recorded(spec, results_dir))
                for spec in specs_of(experiments_dir)}

    return write_kept(results_dir, experiments_dir, derive)


def _kept(results_dir: Path, experiments_dir: Path | None):
    """:func:`fyexp.run.kept_summaries.read_kept` of the folder, read once, and only when a summary is not in the user
    cache."""
    from fyexp.run.kept_summaries import read_kept

    return functools.cache(lambda: read_kept(results_dir, experiments_dir, ProfileSummary))


def list_plain(experiments_dir: Path | None) -> list[str]:
    """``fyexp list --plain`` (and off a terminal): per experiment one tab-separated line (name, profiles, what it
    reproduces, title)."""
    return ["\t".join([s.name, ",".join(s.profile_names()), "; ".join(s.tables + s.figures), s.title])
            for s in specs_of(experiments_dir)]


def list_json(experiments_dir: Path | None, results_dir: Path) -> str:
    """``fyexp list --json``: per experiment its name, title, tables, figures and profiles with cells and estimate."""
    import json

    from fyexp.run.speed import machine_speed

    machine_speed()   # a bad $FYEXP_MACHINE_SPEED is an error here, not a profile left out below
    inputs = functools.cache(lambda: recorded_inputs(results_dir, None))
    kept = _kept(results_dir, experiments_dir)
    body = []
    for s in specs_of(experiments_dir):
        summaries = profile_summaries(s, results_dir, inputs, kept)
        body.append({"name": s.name, "title": s.title, "tables": list(s.tables), "figures": list(s.figures),
                     "profiles": s.profile_names(), "cells": {p.name: p.cells for p in summaries},
                     "estimate_s": {p.name: p.estimate_s for p in summaries},
                     "unestimated_cells": {p.name: p.unestimated for p in summaries},
                     "scaled_s": {p.name: p.scaled_s for p in summaries if p.scaled},
                     "scaled_cells": {p.name: p.scaled for p in summaries if p.scaled}})
    return json.dumps(body, indent=1, ensure_ascii=False)


def list_text(experiments_dir: Path | None, results_dir: Path, width: int) -> list[str]:
    """``fyexp list`` at a terminal of ``width`` columns: :func:`list_blocks` of every experiment."""
    from fyexp.run.speed import machine_speed, speed_text

    speed = machine_speed()   # before the profiles: a bad $FYEXP_MACHINE_SPEED is an error, not a profile left out
    specs = specs_of(experiments_dir)
    inputs = functools.cache(lambda: recorded_inputs(results_dir, None))   # once, and only if a profile needs it
    kept = _kept(results_dir, experiments_dir)
    lines = list_blocks(specs, {s.name: profile_summaries(s, results_dir, inputs, kept) for s in specs}, width)
    note = (f"Times: the cells' wall times recorded in {results_dir} where it has them, else those recorded on the "
            f"project's machine {speed_text(speed)}; `fyexp show NAME --profile PROFILE` says which.")
    return lines + [""] + textwrap.wrap(note, width=width, break_long_words=False, break_on_hyphens=False)


def comments_wrapped(text: str, width: int) -> str:
    """``text`` (``fyexp show``'s YAML) with each comment line longer than ``width`` wrapped between words, its
    continuation lines comments too (``#   ...``: the output stays valid YAML); other lines as they are (a YAML
    value is never broken)."""
    out = []
    for line in text.split("\n"):
        if line.startswith("# ") and len(line) > width:
            out += textwrap.wrap(line, width=max(width, 20), subsequent_indent="#   ", break_long_words=False,
                                 break_on_hyphens=False) or [line]
        else:
            out.append(line)
    return "\n".join(out)


def _kept_summary(spec, profile: str, results_dir: Path, experiments_dir: Path | None) -> ProfileSummary | None:
    """The profile's summary, on this machine, from those ``fyexp report`` kept (:mod:`fyexp.run.kept_summaries`) where
    they are current and of this spec; else ``None``."""
    from fyexp.run.kept_summaries import read_kept, spec_digest

    digest, found = read_kept(results_dir, experiments_dir, ProfileSummary).get(spec.name, ("", []))
    mine = [s for s in found if s.name == profile] if digest == spec_digest(spec) else []
    return mine[0].at_speed() if mine else None


def show_text(name: str, profile: str, sets: list[str] | None, experiments_dir: Path | None,
              results_dir: Path) -> str:
    """``fyexp show``: :func:`show_summary` (YAML comments), then the resolved spec as YAML (every hyperparameter
    a run uses); only the runner's ``Config`` is imported, not the runner (torch)."""
    import yaml

    from fyexp.experiments import get_config_class
    from fyexp.store.plain import jsonable
    from fyexp.spec.specs import load_spec, parse_sets, resolve

    spec = load_spec(name, experiments_dir)
    config_class = get_config_class(spec.runner)
    resolved = resolve(spec, profile, config_class, None, parse_sets(sets))
    found = None if sets else _kept_summary(spec, resolved.profile, results_dir, experiments_dir)
    summary = show_summary(spec, found or summarize(spec, resolved, results_dir, scaled=True))
    summary += ["# " + note for note in getattr(config_class, "show_notes", ())]   # e.g. where weights come from
    body = {"name": spec.name, "title": spec.title, "runner": spec.runner, "profile": resolved.profile,
            "seeds": list(resolved.seeds), "tables": list(spec.tables), "figures": list(spec.figures),
            "config": resolved.config}
    return "\n".join(summary) + "\n" + yaml.safe_dump(jsonable(body), sort_keys=False, allow_unicode=True)
