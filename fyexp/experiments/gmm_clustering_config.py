"""The settings of gmm-clustering (FYVI App. B; docs/protocols.md): the data, EM settings and grid — each method
with its own axes (:data:`AXES`), validated here so that the runner holds only the experiment."""

from __future__ import annotations

from dataclasses import field
from typing import Annotated, Literal

from fyexp.core.constraints import Interval, NonNegativeFloat, NonNegativeInt, PositiveFloat, PositiveInt, settings
from fyexp.core.errors import require
from fyexp.experiments.grid import check_method_grid

#: method → its axes and their domains (``sparse``: the entropic index ρ > 0; ``truncated``: C′ active components)
AXES = {"standard": {}, "hard": {}, "sparse": {"rho": PositiveFloat}, "truncated": {"n_active": PositiveInt},
        "sklearn": {}}


def _default_grid() -> dict:
    return {"standard": {}, "hard": {}, "sparse": {"rho": [0.1, 0.5, 0.9, 1.0, 1.1, 1.5, 2.0, 3.0]},
            "truncated": {"n_active": [2]}, "sklearn": {}}


TABLE1_SPARSE_RHOS = (2.0, 1.5)     # sparse rows of Table 1 (ρ = 1.5 an extra row); other ρ: Figure 2 only

@settings
class GMMClusteringConfig:
    """Data (FYVI App. B; docs/protocols.md), EM settings and the grid: method → its axes (``null``: not run)."""

    centers: list[list[float]] = field(default_factory=lambda: [[0.0, 0.0], [1.0, 1.0], [1.0, -1.0], [-1.0, -1.0]])
    spread: list[PositiveFloat] = field(default_factory=lambda: [0.5, 0.7, 0.9, 0.11])
    spread_kind: Literal["std", "variance"] = "std"
    n_samples: int = 1000
    data_seed: int = 0
    n_outliers: NonNegativeInt = 100
    outlier_seed: int = 40
    outlier_box: PositiveFloat = 3.0
    n_components: Annotated[int, Interval(int, 2, None)] = 4
    n_iter: PositiveInt = 200
    reg_covar: NonNegativeFloat = 1e-6
    prior_term: Literal["log", "tsallis"] = "log"
    sparse_init_skip: NonNegativeInt = 0
    grid: dict[str, dict | bool | None] = field(default_factory=_default_grid)

    def __post_init__(self):
        require(len(self.centers) >= 1 and len({len(c) for c in self.centers}) == 1, "centers",
                "a non-empty list of points of equal dimension", self.centers)
        require(len(self.spread) == len(self.centers), "spread", "one positive number per center", self.spread)
        require(self.n_samples >= len(self.centers), "n_samples", "at least one point per center", self.n_samples)
        self.grid = check_method_grid(self.grid, AXES)
        active = self.grid.get("truncated", {}).get("n_active", [])
        require(all(c <= self.n_components for c in active), "grid.truncated.n_active",
                f"integers C' in [1, n_components={self.n_components}]", active)

    @property
    def blobs(self):
        from fyexp.data.gmm_blobs import BlobsSpec

        return BlobsSpec.from_lists(self.centers, self.spread, spread_kind=self.spread_kind,
                                    n_samples=self.n_samples, random_state=self.data_seed,
                                    n_outliers=self.n_outliers, outlier_seed=self.outlier_seed,
                                    outlier_box=self.outlier_box)


Config = GMMClusteringConfig   # the name fyexp.experiments.get_config_class reads


def cell_config(config: GMMClusteringConfig, cell) -> dict:
    """A cell's settings (:func:`fyexp.spec.settings.scoped_config`): the config as written before the grid was
    declared — the grid as ``table_rhos`` (the sparse ρ of Table 1), ``sweep_rhos`` (every ρ),
    ``truncated_active`` and ``sklearn_reference`` — so that committed cells keep their settings hashes."""
    from fyexp.spec.settings import jsonable

    data = jsonable(config)
    grid = data.pop("grid")
    rhos = grid.get("sparse", {}).get("rho", [])
    return {**data, "table_rhos": [r for r in TABLE1_SPARSE_RHOS if r in rhos], "sweep_rhos": rhos,
            "truncated_active": grid.get("truncated", {}).get("n_active", []),
            "sklearn_reference": "sklearn" in grid}


cell_work = None
"""Its cells declare no work (the experiment's :meth:`~fyexp.experiments.base.Experiment.work` is None), so the
plan never scales their times from another profile's cells (:class:`fyexp.run.estimate.LightWork`)."""
