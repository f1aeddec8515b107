"""The cells a GPU allocation should run: the missing cells of the ``paper`` queue (issue 33), in priority order.

A cell is *missing* when ``results/`` holds no finished file for it at the settings the spec asks now.  Settings
are compared without their ``environment`` part (device kind, torch and numpy versions, :func:`fyexp.spec.settings.
environment`): a cell finished on the CPU is not run again on the GPU, and the GPU's rows are not "missing" to a
later pack on the CPU (:func:`fyexp.store.provenance.freshness.settings_state`).

Cells are grouped into **units**: the seeds of one cell (same method and parameters) where the experiment trains
seeds together as an ensemble (it defines ``prefit``, :func:`fyexp.run.runner.prefit_ensembles`), else one cell per
unit, so that units can run side by side on one device.
"""

from __future__ import annotations

import glob
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable

from fyexp.run.cell_filter import CellFilter
from fyexp.store.results import Cell, ResultStore, _fmt

__all__ = ["PAPER_QUEUE", "QueueEntry", "Unit", "missing_units", "cell_state", "resolve_entry", "unit_filter"]


@dataclass(frozen=True)
class QueueEntry:
    """One step of the queue: an experiment's profile, narrowed by ``only`` (key → accepted values, as written in
    cell keys: ``1.5``, ``2``, ``caltech``), at ``seeds`` (``None``: the profile's)."""

    label: str
    experiment: str
    profile: str = "paper"
    only: tuple[tuple[str, tuple[str, ...]], ...] = ()
    seeds: tuple[int, ...] | None = None
    sets: tuple[str, ...] = ()      # ``--set KEY=VALUE`` overrides (the cells then belong to a variant profile)


#: Issue 33's queue, in its order: FYVI Table 2 (the authors' regularizer first, then the FY rows still missing),
#: FY-NVDM's paper seeds, VR Table 1 Caltech K = 50, then the Frey Face folds; then the two ``paper`` sets the issue
#: leaves to a GPU: VR Table 1's MNIST rows (3,280 epochs a cell) and frac-vae (500 epochs of 60,000 images).
PAPER_QUEUE: tuple[QueueEntry, ...] = (
    QueueEntry("fyvi Table 2, authors' regularizer", "fy-vae", only=(("regularizer", ("authors",)),)),
    QueueEntry("fyvi Table 2, FY regularizer", "fy-vae", only=(("regularizer", ("fy",)),)),
    QueueEntry("fyvi Table 3, FY-NVDM seeds", "fy-nvdm"),
    QueueEntry("vr Table 1, Caltech K = 50", "vr-vae", only=(("dataset", ("caltech",)), ("K", ("50",)))),
    QueueEntry("vr Table 1, Frey Face folds", "vr-vae", only=(("dataset", ("freyface",)),)),
    # then the sets the issue leaves to a GPU (too long for two cores: `fyexp reproduce --dry-run` scales their cost)
    QueueEntry("vr Table 1, MNIST (GPU-sized)", "vr-vae", only=(("dataset", ("mnist",)),)),
    QueueEntry("frac Tables 2, 6, 7 and 9 (GPU-sized)", "frac-vae"),
)


@dataclass
class Unit:
    """Cells run together on the device: the seeds of one cell (an ensemble where the experiment has ``prefit``)."""

    label: str
    experiment: str
    profile: str                    # the spec's profile
    method: str
    params: dict[str, Any]
    seeds: list[int]
    ensemble: bool
    data: list[str] = field(default_factory=list)   # data sets it reads (:data:`gpu_kit.data.DATA_FILES`)
    sets: list[str] = field(default_factory=list)   # ``--set`` overrides
    folder: str = ""                # the profile's folder name under cells/ and work/ (a variant's label)
    entry_seeds: list[int] | None = None   # its queue entry's seeds (``--seeds``; None: the profile's)

    @property
    def name(self) -> str:
        return Cell(self.method, self.seeds[0], self.params).key.rsplit("__seed=", 1)[0] + \
            f"__seeds={','.join(map(str, self.seeds))}"

    def cells(self) -> list[Cell]:
        return [Cell(self.method, s, dict(self.params)) for s in self.seeds]

    def entry(self) -> QueueEntry:
        """The queue entry whose profile (or variant) this unit's cells belong to: its entry's seeds, not the unit's
        own (a part of the entry's seeds, selected by :func:`unit_filter` as ``--only seed=...`` does)."""
        seeds = None if self.entry_seeds is None else tuple(self.entry_seeds)
        return QueueEntry(self.label, self.experiment, self.profile, seeds=seeds, sets=tuple(self.sets))

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> Unit:
        return cls(**data)


def resolve_entry(entry: QueueEntry, experiments_dir: Path | None = None):
    """``(experiment, resolved)`` of an entry's profile, as ``fyexp run --seeds ... --set ...`` resolves them (seeds
    other than the profile's make a variant: :func:`fyexp.spec.specs.resolve_variant`)."""
    from fyexp.experiments import get_experiment
    from fyexp.spec.specs import load_spec, parse_sets, resolve_variant

    spec = load_spec(entry.experiment, experiments_dir)
    experiment = get_experiment(spec.runner)
    seeds = list(entry.seeds) if entry.seeds is not None else None
    return experiment, resolve_variant(spec, entry.profile, experiment.Config, seeds, parse_sets(list(entry.sets)))


def cell_state(store: ResultStore, resolved: Any, experiment: Any, cell: Cell) -> str:
    """``done`` (a finished file at the settings asked now, whatever the environment) or ``missing``."""
    from fyexp.spec.settings import expectation

    finished = store.is_finished(resolved.profile, cell, expectation(resolved, experiment, cell, "cpu", None,
                                                                     compare_environment=False))
    return "done" if finished else "missing"


def unit_filter(unit: Unit) -> CellFilter:
    """The ``--only`` filter that selects exactly the unit's cells (values escaped: they are matched literally)."""
    conditions = [("method", (glob.escape(unit.method),))]
    conditions += [(key, (glob.escape(_fmt(value)),)) for key, value in sorted(unit.params.items())]
    conditions.append(("seed", tuple(str(s) for s in unit.seeds)))
    return CellFilter(tuple(conditions))


def missing_units(entries: Iterable[QueueEntry], results_dir: Path, experiments_dir: Path | None = None,
                  only: CellFilter | None = None) -> list[Unit]:
    """The units of the entries' missing cells, in the entries' order (then the grid's), each cell once."""
    from gpu_kit.data import data_sets

    units: list[Unit] = []
    seen: set[tuple[str, str, str]] = set()
    for entry in entries:
        experiment, resolved = resolve_entry(entry, experiments_dir)
        cells = experiment.cells(resolved.config, resolved.seeds)
        cells = CellFilter(entry.only).select(cells) if entry.only else cells
        if only is not None and only.conditions:
            cells = only.select(cells)
        store = ResultStore(results_dir, resolved.name)
        ensemble = experiment.trains_ensembles
        groups: dict[tuple[str, str], list[Cell]] = {}
        for cell in cells:
            key = (resolved.name, resolved.profile, cell.key)
            if key in seen or cell_state(store, resolved, experiment, cell) == "done":
                continue
            seen.add(key)
            group = (cell.method, cell.params_json) if ensemble else (cell.method, cell.key)
            groups.setdefault(group, []).append(cell)
        for members in groups.values():
            first = members[0]
            units.append(Unit(entry.label, resolved.name, entry.profile, first.method, dict(first.params),
                              [c.seed for c in members], ensemble and len(members) > 1,
                              data_sets(resolved.name, first), list(entry.sets), resolved.profile,
                              None if entry.seeds is None else list(entry.seeds)))
    return units
