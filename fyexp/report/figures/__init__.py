"""Figure functions over tidy frames, registered by name and named by each spec's ``plots:`` list.

A spec says which figures its results make::

    plots:
      - fyvi-figure1
      - topic-coherence: {models: {nvdm: NVDM, fy-nvdm: FY-NVDM}}   # a name with keyword options

A figure function is registered with :func:`figure` and called as ``fn(ctx, **options)`` with a
:class:`FigureContext`: the experiment's rows (status ``ok``), its results folder (artifacts, study files) and a
loader of **any** experiment's rows, so a figure can compare experiments (NVDM vs FY-NVDM coherence) without a
runner opening another's CSV.  It returns the PNG paths it wrote.  The names and their options are listed in
:mod:`fyexp.spec.plots` too, so that checking a spec needs no report.  Nothing here imports
:mod:`fyexp.experiments`; figures read what the runs wrote, never the runners.  Matplotlib is imported by the
drawing functions only (:mod:`fyexp.report.figures.output`), so naming and checking figures stays cheap.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from fyexp.spec.plots import FIGURES, check_plot

__all__ = ["FigureContext", "figure", "figure_names", "get_figure", "check_plot", "draw_figures", "save_figure", "plt"]

FigureFunction = Callable[..., list[Path]]
_FIGURES: dict[str, FigureFunction] = {}
_MODULES = ("clustering", "calibration", "vae", "topics", "study", "tvem", "vr")


@dataclass
class FigureContext:
    """What a figure function reads: one experiment's rows and folder, and every experiment's rows by name."""

    experiment: str
    frame: pd.DataFrame
    folder: Path
    load: Callable[[str], pd.DataFrame]

    @property
    def figures_dir(self) -> Path:
        return self.folder / "figures"

    @property
    def artifacts(self) -> Path:
        return self.folder / "artifacts"


def figure(name: str) -> Callable[[FigureFunction], FigureFunction]:
    """Decorator: register ``fn(ctx, **options) -> list[Path]`` under ``name``, a name of the light list
    :data:`fyexp.spec.plots.FIGURES` (which specs are checked against) with the same keyword-only options."""

    def register(fn: FigureFunction) -> FigureFunction:
        options = tuple(p for p, v in inspect.signature(fn).parameters.items() if v.kind == v.KEYWORD_ONLY)
        if FIGURES.get(name) != options:
            raise ValueError(f"figure '{name}' with options {options}: add it as `{name!r}: {options!r}` to "
                             f"fyexp.spec.plots.FIGURES (now {FIGURES.get(name)!r}), the names specs may use")
        if name in _FIGURES and _FIGURES[name] is not fn:
            raise ValueError(f"figure '{name}' is registered twice")
        _FIGURES[name] = fn
        return fn

    return register


def _registry() -> dict[str, FigureFunction]:
    """Every figure of every module of this package (a new figure module registers itself by being here)."""
    for module in pkgutil.iter_modules(__path__):
        if module.name != "output":
            importlib.import_module(f"{__name__}.{module.name}")
    return _FIGURES


def figure_names() -> list[str]:
    return sorted(_registry())


def get_figure(name: str) -> FigureFunction:
    return _registry()[name]


_VECTOR: list[bool] = [False]   # whether save_figure writes a PDF beside each PNG (fyexp report --vector)


class vector_copies:
    """``with vector_copies(True):`` every figure saved inside (:func:`fyexp.report.figures.output.save_figure`) is
    written as a PDF too, beside its PNG, from the same figure (``fyexp report --vector``: for a paper); the PNGs
    stay what the index links."""

    def __init__(self, on: bool):
        self.on, self.before = bool(on), False

    def __enter__(self) -> "vector_copies":
        self.before, _VECTOR[0] = _VECTOR[0], self.on
        return self

    def __exit__(self, *exc) -> None:
        _VECTOR[0] = self.before


def vector_on() -> bool:
    """Whether figures are saved with a PDF copy now (:class:`vector_copies`)."""
    return _VECTOR[0]


def draw_figures(plots: tuple[tuple[str, dict], ...], ctx: FigureContext, manifest=None) -> list[Path]:
    """Every figure the spec names, in order; returns the PNG paths (drawn now or kept).

    With a :class:`fyexp.report.cache.Manifest`, an entry whose key (its code, options, the rows it read and the
    folder's input files: :func:`fyexp.report.cache.figure_key`) matches the manifest's, with its files unchanged,
    is not drawn again; the others are drawn and recorded.  A report with PDF copies (:func:`vector_on`) keys its
    entries apart, so that the first such report draws every figure with its PDF."""
    from fyexp.report.cache import figure_key, folder_files, frame_digest, recording

    if manifest is None or not plots:
        return [p for name, options in plots for p in get_figure(name)(ctx, **options)]
    own, files, digests = frame_digest(ctx.frame), folder_files(ctx.folder), {}
    vector = "+pdf" if vector_on() else ""

    def digest_of(name: str) -> str:
        if name not in digests:
            digests[name] = frame_digest(ctx.load(name))
        return digests[name]

    paths: list[Path] = []
    for name, options in plots:
        fn = get_figure(name)
        entry_id = f"figure:{manifest.rel(ctx.folder)}/{name}" + (json.dumps(options, sort_keys=True) if options else "")
        before = manifest.entries.get(entry_id) or {}
        reads = [n for n in before.get("reads", []) if isinstance(n, str)]
        key = figure_key(name, options, fn.__module__, own, {n: digest_of(n) for n in reads}, files) + vector
        kept = manifest.lookup(entry_id, key)
        if kept is not None:
            paths += [manifest.root / p for p in kept.get("pngs", [])]
            continue
        read: list[str] = []
        tracked = FigureContext(ctx.experiment, ctx.frame, ctx.folder, lambda n: (read.append(n), ctx.load(n))[1])
        with recording() as wrote:
            pngs = fn(tracked, **options)
        reads = sorted(set(read))
        key = figure_key(name, options, fn.__module__, own, {n: digest_of(n) for n in reads}, files) + vector
        manifest.record(entry_id, key, wrote + list(pngs), reads=reads, pngs=[manifest.rel(p) for p in pngs])
        paths += pngs
    return paths


def __getattr__(name: str) -> Any:  # ``from fyexp.report.figures import plt, save_figure`` loads matplotlib lazily
    if name in ("plt", "save_figure"):
        from fyexp.report.figures import output

        return getattr(output, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
