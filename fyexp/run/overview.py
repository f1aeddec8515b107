"""What ``fyexp list`` and ``fyexp show`` say about an experiment before its settings: per profile, its cells, its
methods, data sets and the time it took before (no runner, torch or pandas is imported: both commands stay fast).

A profile's estimate is that of ``fyexp run``'s plan (:mod:`fyexp.run.estimate`, the epochs from the runner's light
config module), with, apart, the scaled time of the cells no recorded cell of the profile estimates.  ``fyexp list``
wraps each experiment's block between words (:func:`list_blocks`) at any width of 60 columns or more.
"""

from __future__ import annotations

import functools
import textwrap
from dataclasses import dataclass, field, replace
from pathlib import Path

from fyexp.core.words import counted, duration
from fyexp.run.estimate import (at_speed, estimate_cells, extrapolated_text, recorded_factor, recorded_inputs,
                                scaled_text, source_text, times_as_recorded, unknown_text)


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
        """The summary with its times on this machine (:func:`fyexp.run.estimate.at_speed` of each one's folder)."""
        return replace(self, estimate_s=at_speed(self.estimate_s, self.source, factor_of),
                       scaled_s=at_speed(self.scaled_s, self.scaled_source, factor_of))

    def line(self) -> str:
        """``paper (60 cells, 30.7 h)``, its spaces non-breaking (one line in :func:`list_blocks`); the cells without
        an estimate add their scaled time (``+ ~706 h scaled``, or alone: ``~158,000 h scaled``), else are unknown."""
        known = duration(self.estimate_s) if self.estimate_s is not None else None
        scaled = f"~{duration(self.scaled_s)} scaled" if self.scaled and self.scaled_s is not None else None
        rest = self.unestimated - (self.scaled if scaled else 0)
        parts = [p for p in (known, scaled) if p]
        when = " + ".join(parts) if parts else "time unknown"
        if parts and rest > 0:
            when = f"{when} + {rest} unknown"
        return f"{self.name} ({counted(self.cells)}, {when})".replace(" ", "\u00a0")


def _axes(cells) -> dict[str, list]:
    """Every parameter of ``cells`` → its values (as text), each in the order the cells first give them."""
    keys = dict.fromkeys(k for c in cells for k in c.params)
    return {k: list(dict.fromkeys(str(c.params[k]) for c in cells if c.params.get(k) is not None)) for k in keys}


def summary_as_recorded(spec, resolved, results_dir: Path, inputs=None) -> ProfileSummary:
    """The summary of one resolved profile of ``spec``, its times as recorded (:meth:`ProfileSummary.at_speed` puts
    them on this machine), estimated as the plan estimates (the epochs as the spec gives them now: one figure),
    the cells without a recorded time scaled from another profile's (:func:`_scaled_figure`).  ``inputs``: a
    callable giving :func:`fyexp.run.estimate.recorded_inputs` of ``results_dir`` (once for all of ``list``)."""
    from fyexp.experiments import get_config_module
    from fyexp.experiments.declared import declared_cells
    from fyexp.spec.settings import cells_training_epochs

    cells = declared_cells(resolved.config, resolved.seeds)
    profiles = list(dict.fromkeys([resolved.profile, getattr(resolved, "base_profile", resolved.profile)]))
    times, folder = times_as_recorded(results_dir, spec.name, profiles)
    names = [c.method or "" for c in cells]   # "" where the runner names the method
    per_method = {m: [c for c, n in zip(cells, names) if n == m] for m in dict.fromkeys(names)}
    module = get_config_module(spec.runner)
    epochs = None if module is None else cells_training_epochs(module, resolved.config, cells)
    found = estimate_cells(names, times, epochs, [c.params for c in cells])
    return ProfileSummary(resolved.profile, len(cells), tuple(resolved.seeds), found.seconds, len(times),
                          {m: len(cs) for m, cs in per_method.items()}, _axes(cells),
                          {m: _axes(cs) for m, cs in per_method.items()}, len(found.unestimated), found.extrapolated,
                          found.keys, str(folder) if folder is not None else "",
                          *_scaled_figure(spec, resolved, results_dir, cells, found.unestimated, inputs))


def _scaled_figure(spec, resolved, results_dir: Path, cells, positions, inputs=None) -> tuple:
    """:func:`fyexp.run.estimate.scaled_cells_as_recorded` of ``cells`` at ``positions`` (none for no cell or a
    runner without a light config module), kept in the user cache (``show-scaled``: it takes seconds)."""
    import hashlib
    import json

    from fyexp.run.estimate import LightWork, scaled_cells_as_recorded
    from fyexp.store.plain import jsonable
    from fyexp.store.user_cache import remembered

    light = LightWork.of(spec.runner) if positions else None
    if light is None:
        return None, 0, (), ""

    def plain() -> list:   # what is kept: plain values, the folder as text
        seconds, count, profiles, folder = scaled_cells_as_recorded([cells[i] for i in positions], resolved, light,
                                                                    results_dir)
        return [seconds, count, list(profiles), str(folder) if folder is not None else ""]

    inputs = inputs() if inputs is not None else recorded_inputs(results_dir, None)
    settings = hashlib.sha256(json.dumps(jsonable(resolved.config), sort_keys=True, default=str).encode()).hexdigest()
    name = repr((spec.name, resolved.profile, str(Path(results_dir).resolve())))
    seconds, count, profiles, folder = plain() if inputs is None else remembered(
        "show-scaled", name, (inputs, settings, tuple(resolved.seeds), tuple(positions)), plain)
    return seconds, count, tuple(profiles), folder


def profile_summaries(spec, results_dir: Path, inputs=None, kept=None) -> list[ProfileSummary]:
    """Every profile of ``spec`` (:func:`summaries_as_recorded`) at this machine's speed."""
    factor_of = functools.cache(recorded_factor)
    return [summary.at_speed(factor_of) for summary in summaries_as_recorded(spec, results_dir, inputs, kept)]


def summaries_as_recorded(spec, results_dir: Path, inputs=None, kept=None) -> list[ProfileSummary]:
    """Every profile of ``spec`` that resolves, summarized as recorded (:func:`summary_as_recorded`), kept in the
    user cache (``list-summaries``: some 750 reads of cell files) under the recorded inputs and the spec; on a miss
    read from ``kept()`` (:func:`fyexp.run.kept_summaries.read_kept`: a fresh clone) where it is of this spec."""
    from fyexp.run.kept_summaries import spec_digest
    from fyexp.store.user_cache import remembered

    def derive() -> list[ProfileSummary]:
        digest, found = (kept() if kept is not None else {}).get(spec.name, ("", None))
        return found if digest == spec_key and found is not None else _profile_summaries(spec, results_dir, inputs)

    inputs = inputs or functools.cache(lambda: recorded_inputs(results_dir, None))  # the scaled figures' key too
    if (key := inputs()) is None:
        return _profile_summaries(spec, results_dir, inputs)
    spec_key = spec_digest(spec)
    return remembered("list-summaries", repr((spec.name, str(results_dir), str(Path(results_dir).resolve()))),
                      (key, spec_key), derive)


def _profile_summaries(spec, results_dir: Path, inputs=None) -> list[ProfileSummary]:
    from fyexp.core.errors import FyexpError
    from fyexp.experiments import get_config_class
    from fyexp.spec.specs import resolve

    config_class, out = get_config_class(spec.runner), []
    for name in spec.profile_names():
        try:
            out.append(summary_as_recorded(spec, resolve(spec, name, config_class, None, ()), results_dir, inputs))
        except FyexpError:
            continue
    return out


def _axes_text(axes: dict[str, list]) -> str:
    return "; ".join(f"{k} {', '.join(v)}" for k, v in axes.items() if v) or "no grid parameters"


def show_summary(spec, summary: ProfileSummary) -> list[str]:
    """The lines ``fyexp show`` opens with (YAML comments, so the output stays valid YAML)."""
    s = summary
    if s.estimate_s is None:
        when = unknown_text(s.recorded)
    else:
        part = f" for {counted(s.cells - s.unestimated)}" if s.unestimated else ""
        when = f"estimate {duration(s.estimate_s)}{part} from {counted(s.recorded, 'recorded cell')}"
        if s.unestimated:
            when += f", unknown for {s.unestimated} on data none of them used"
        if s.source:
            when += f"; times {source_text(s.source)}"
        if s.extrapolated:
            when += f"; {extrapolated_text(s.extrapolated, s.extrapolated_keys)}"
    if s.scaled:   # the cells without a recorded time, scaled as the plan scales them: the plan's figure
        when += f"; {scaled_text(s.scaled_s, s.scaled, s.scaled_from)}"
    lines = [f"{spec.name} [{s.name}]: {counted(s.cells)} ({'seed' if len(s.seeds) == 1 else 'seeds'} "
             f"{', '.join(map(str, s.seeds))}); {when}"]
    named = {m: n for m, n in s.methods.items() if m}
    if named:
        lines.append("methods:")
        lines += [f"  {m}: {counted(n)} ({_axes_text(s.methods_axes[m])})" for m, n in named.items()]
    else:
        lines.append(f"cells vary over: {_axes_text(s.axes)}")
    lines.append("data sets: " + (", ".join(s.axes.get("dataset", []))
                                  or "none named in the grid (see the description)"))
    return ["# " + line for line in lines]


def _wrap(text: str, width: int, first: str = "", rest: str = "") -> list[str]:
    """``text`` wrapped between words at ``width`` (a word longer than a line is kept whole)."""
    return textwrap.wrap(text, width=width, initial_indent=first, subsequent_indent=rest, break_long_words=False,
                         break_on_hyphens=False) or [first.rstrip()]


def list_blocks(specs: list, summaries: dict[str, list[ProfileSummary]], width: int) -> list[str]:
    """``fyexp list`` at ``width`` columns (≥ 60): per experiment its name and title, what it reproduces and its
    profiles."""
    indent = " " * 4
    out: list[str] = []
    for spec in specs:
        out += _wrap(f"{spec.name} — {spec.title}", width, "", indent)
        refs = [r.replace(" ", "\u00a0") if len(r) <= 20 else r for r in spec.tables + spec.figures]  # "vr Table 1"
        out += _wrap("; ".join(refs) or "no published table or figure", width, indent + "reproduces: ", indent * 2)
        profiles = [s.line() for s in summaries.get(spec.name, [])] or [", ".join(spec.profile_names())]
        out += _wrap(" · ".join(profiles), width, indent + "profiles: ", indent * 2) + [""]
    return out[:-1]


# ---- the output of `fyexp list` and `fyexp show` -------------------------------------------------------------------
def specs_of(experiments_dir: Path | None) -> list:
    """Every spec of ``experiments_dir`` (the shipped ones by default), loaded."""
    from fyexp.spec.specs import available_specs, load_spec

    return [load_spec(name, experiments_dir) for name in available_specs(experiments_dir)]


def keep_summaries(results_dir: Path, experiments_dir: Path | None) -> Path | None:
    """Keep every experiment's summaries as recorded beside the results, for a fresh clone's ``list`` and ``show``
    (:func:`fyexp.run.kept_summaries.write_kept`); the path written, or ``None``."""
    from fyexp.run.kept_summaries import spec_digest, write_kept

    return write_kept(results_dir, experiments_dir, lambda: {
        spec.name: (spec_digest(spec), summaries_as_recorded(spec, results_dir)) for spec in specs_of(experiments_dir)})


def list_plain(experiments_dir: Path | None) -> list[str]:
    """``fyexp list --plain`` (and off a terminal): per experiment one tab-separated line."""
    return ["\t".join([s.name, ",".join(s.profile_names()), "; ".join(s.tables + s.figures), s.title])
            for s in specs_of(experiments_dir)]


def _listed(experiments_dir: Path | None, results_dir: Path) -> tuple:
    """This machine's speed (first: a bad $FYEXP_MACHINE_SPEED is an error, not a profile left out), every spec and
    its :func:`profile_summaries`, the recorded inputs and the kept summaries each read once, and only if needed."""
    from fyexp.run.kept_summaries import read_kept
    from fyexp.run.speed import machine_speed

    speed, specs = machine_speed(), specs_of(experiments_dir)
    inputs = functools.cache(lambda: recorded_inputs(results_dir, None))
    kept = functools.cache(lambda: read_kept(results_dir, experiments_dir, ProfileSummary))
    return speed, specs, {s.name: profile_summaries(s, results_dir, inputs, kept) for s in specs}


def list_json(experiments_dir: Path | None, results_dir: Path) -> str:
    """``fyexp list --json``: per experiment its name, title, tables, figures and profiles with cells and estimate."""
    import json

    _, specs, summaries = _listed(experiments_dir, results_dir)
    fields = {"cells": "cells", "estimate_s": "estimate_s", "unestimated_cells": "unestimated", "scaled_s": "scaled_s",
              "scaled_cells": "scaled"}   # the scaled figures only for the profiles with any
    return json.dumps([{"name": s.name, "title": s.title, "tables": list(s.tables), "figures": list(s.figures),
                        "profiles": s.profile_names(), **{key: {p.name: getattr(p, field) for p in summaries[s.name]
                                                                if p.scaled or not key.startswith("scaled")}
                                                          for key, field in fields.items()}}
                       for s in specs], indent=1, ensure_ascii=False)


def list_text(experiments_dir: Path | None, results_dir: Path, width: int) -> list[str]:
    """``fyexp list`` at a terminal of ``width`` columns: :func:`list_blocks` of every experiment."""
    from fyexp.run.speed import speed_text

    speed, specs, summaries = _listed(experiments_dir, results_dir)
    note = (f"Times: the cells' wall times recorded in {results_dir} where it has them, else those recorded on the "
            f"project's machine {speed_text(speed)}; `fyexp show NAME --profile PROFILE` says which.")
    return list_blocks(specs, summaries, width) + [""] + _wrap(note, width)


def comments_wrapped(text: str, width: int) -> str:
    """``text`` (``fyexp show``'s YAML) with each comment line longer than ``width`` wrapped between words into
    comment lines (``#   ...``: valid YAML still); other lines, YAML values, as they are."""
    return "\n".join(part for line in text.split("\n") for part in (
        _wrap(line, max(width, 20), rest="#   ") if line.startswith("# ") and len(line) > width else [line]))


def show_text(name: str, profile: str, sets: list[str] | None, experiments_dir: Path | None,
              results_dir: Path) -> str:
    """``fyexp show``: :func:`show_summary`, the kept one without ``--set`` where it is of this spec
    (:mod:`fyexp.run.kept_summaries`), then the resolved spec as YAML (the runner's ``Config`` imported, not it)."""
    import yaml

    from fyexp.experiments import get_config_class
    from fyexp.run.kept_summaries import read_kept, spec_digest
    from fyexp.store.plain import jsonable
    from fyexp.spec.specs import load_spec, parse_sets, resolve

    spec = load_spec(name, experiments_dir)
    config_class = get_config_class(spec.runner)
    resolved = resolve(spec, profile, config_class, None, parse_sets(sets))
    kept = {} if sets else read_kept(results_dir, experiments_dir, ProfileSummary)
    digest, kept = kept.get(spec.name, ("", []))
    found = next((s.at_speed() for s in kept if s.name == resolved.profile and digest == spec_digest(spec)), None)
    summary = show_summary(spec, found or summary_as_recorded(spec, resolved, results_dir).at_speed())
    summary += ["# " + note for note in getattr(config_class, "show_notes", ())]   # e.g. where weights come from
    body = {"name": spec.name, "title": spec.title, "runner": spec.runner, "profile": resolved.profile,
            "seeds": list(resolved.seeds), "tables": list(spec.tables), "figures": list(spec.figures),
            "config": resolved.config}
    return "\n".join(summary) + "\n" + yaml.safe_dump(jsonable(body), sort_keys=False, allow_unicode=True)
