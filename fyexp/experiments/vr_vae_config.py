"""The settings of vr-vae (:mod:`fyexp.experiments.vr_vae`): its declared grid and hyperparameters, validated.

Kept beside the runner so that the runner holds what it runs; the table of methods names each method's paper
table and row (the runner maps the same names to objectives).
"""

from __future__ import annotations

import dataclasses
from dataclasses import field
from typing import Annotated, Literal

from fyexp.core.constraints import Interval, NonNegativeFloat, OneOf, PositiveFloat, PositiveInt, settings
from fyexp.data.names import VR_IMAGE_DATASETS as DATASETS
from fyexp.core.errors import require
from fyexp.experiments.grid import axes, expand
from fyexp.train import OptimizerConfig, ScheduleConfig, TrainConfig

#: method → (paper table, paper row): Table 1's three methods and the in-text VR-0.5 and single-pass IWAE
PAPER_ROWS = {"vae": ("1", "VAE"), "iwae": ("1", "IWAE"), "vr_max": ("1", "VR-max"), "vr_half": ("text", "VR-0.5"),
              "iwae_single": ("text", "IWAE (single backward pass)")}
#: the training and test images of each data set where no ``n_train`` / ``n_test`` cap is set: MNIST's 60,000 and
#: 10,000 (torchvision), Caltech 101 Silhouettes' 4,100 and 2,307 (the .mat split), Frey Face's 90/10 split of 1,965
#: faces, 1,768 and 197 (:func:`fyexp.data.vr_images.seeded_split`)
FULL_SIZES = {"mnist": (60_000, 10_000), "caltech": (4_100, 2_307), "freyface": (1_768, 197)}
#: settings that only Frey Face cells read (the runs, the Frey Face protocol, Figure 4)
FREYFACE_ONLY = ("n_folds", "fold_seed", "freyface", "bias_alphas", "bias_samples", "bias_points", "bias_repetitions")


def _iwae_train() -> TrainConfig:
    return TrainConfig(epochs=3280, batch_size=20, optimizer=OptimizerConfig(lr=1e-3, betas=(0.99, 0.999), eps=1e-4),
                       schedule=ScheduleConfig(name="iwae", rounded=True))


@settings
class FreyProtocol:
    """Frey Face only (spec block ``freyface:``): decoder mean link, initialization, weight prior, runs, the VAE's
    KL; each setting with its source in the authors' code: :mod:`fyexp.experiments.vr_vae_frey`.  The defaults
    are our settings before the authors' were followed."""

    mean: Literal["sigmoid", "linear"] = "linear"
    init_std: PositiveFloat | None = None
    weight_prior: NonNegativeFloat = 0.0
    splits: Literal["seeded", "partition"] = "partition"
    train_fraction: Annotated[float, Interval(float, 0, 1, "neither")] = 0.9
    elbo: Literal["mc", "analytic"] = "analytic"

    @property
    def observation(self) -> str:
        """The observation head (:data:`fyexp.models.heads.OBSERVATIONS`) of the decoder's mean link."""
        return "gaussian_sigmoid" if self.mean == "sigmoid" else "gaussian"


@axes
class Grid:
    """The cells, as ``include`` entries ``{dataset, L, K, method, fold}`` (a value or a list each; ``fold`` null
    but for Frey Face) less the ``exclude`` entries."""

    include: list[dict] = field(default_factory=list)
    exclude: list[dict] = field(default_factory=list)

    def __post_init__(self):
        for c in expand(self):
            require(c["dataset"] in DATASETS and c["L"] in (1, 2) and c["K"] >= 1 and (c["L"] == 1 or c["dataset"] ==
                    "mnist"), "grid", f"data sets among {list(DATASETS)}, L = 1 or 2 (2 for MNIST only), K >= 1", c)
            require(c["method"] in PAPER_ROWS, "grid", f"methods among {list(PAPER_ROWS)}", c)
            require((c["fold"] is None) == (c["dataset"] != "freyface"), "grid", "a fold for Frey Face only", c)


@settings
class Config:
    """The grid, the training blocks per data set, caps, the held-out part, evaluation and Figures 3–4."""

    grid: Grid = field(default_factory=Grid)
    n_folds: int = 10
    fold_seed: int = 0
    # Frey Face's model, initialization, weight prior, splits and VAE bound (:mod:`fyexp.experiments.vr_vae_frey`);
    # the defaults are our settings before the authors' code was followed, the spec sets the authors'
    freyface: FreyProtocol = field(default_factory=FreyProtocol)
    train_freyface: TrainConfig = field(default_factory=lambda: TrainConfig(
        epochs=1000, batch_size=100, optimizer=OptimizerConfig(lr=5e-4)))
    train_caltech: TrainConfig = field(default_factory=lambda: dataclasses.replace(
        _iwae_train(), epochs=255, schedule=ScheduleConfig(name="iwae", rounded=True, stage_growth=2)))
    train_mnist: TrainConfig = field(default_factory=_iwae_train)
    n_train: dict[str, int] = field(default_factory=dict)  # cap on training images per data set (cpu profiles)
    n_test: dict[str, int] = field(default_factory=dict)  # cap on test images per data set
    # the VAE's KL term on the other data sets, per data set: ``mc`` = (1/K) Σ_k log w_k, as the IWAE code trains
    # its VAE (yburda/iwae iwae.py l. 157-163; YingzhenLi/VRbound iwae/iwae.py l. 185-191), ``analytic`` = the
    # closed-form KL (the default: our choice before the authors' code was read; L = 2 is Monte Carlo either way).
    # Frey Face's is ``freyface.elbo``.  An entry ``analytic`` is the same as none, and neither is in a cell's
    # settings, so cells of data sets without ``mc`` keep their settings hash.
    elbo: dict[Annotated[str, OneOf(tuple(d for d in DATASETS if d != "freyface"))],
               Literal["mc", "analytic"]] = field(default_factory=dict)
    # images held out from the END of the training part per data set, for choosing a stopping epoch on the VI
    # setting ("the learning rates and stopping epochs were tuned on the VI setting", VR §5.1): the cell then
    # reports the validation bound every ``valid_every`` epochs (``valid_bound``) and its argmax (``best_epoch``)
    validation: dict[Annotated[str, OneOf(DATASETS)], PositiveInt] = field(default_factory=dict)
    valid_every: PositiveInt = 10
    test_samples: PositiveInt = 5000
    test_chunk: PositiveInt = 500
    test_batch: int = 100
    bias_alphas: list[float] = field(default_factory=lambda: [0.0, -1.0, -5.0, -50.0, -500.0])
    bias_samples: list[int] = field(default_factory=lambda: [5, 50])
    bias_points: int = 100
    bias_repetitions: int = 10
    n_figure_samples: int = 64

    def __post_init__(self):
        folds = [c["fold"] for c in expand(self.grid) if c["fold"] is not None]
        require(all(0 <= f < self.n_folds for f in folds), "grid", f"folds in 0..{self.n_folds - 1}", folds)


def cell_config(config: Config, cell) -> dict:
    """What a cell's numbers depend on (its settings, :func:`fyexp.spec.settings.scoped_config`): its data set's
    training block, caps and held-out part, and the evaluation; not the grid (the cell's own values are its
    params) nor the other data sets' blocks; the fold split and Figure 4's settings for Frey Face only.  (The
    JSON the Config of "dataset:L:K" settings gave, less its grid listing: committed cells keep their hash.)"""
    from fyexp.store.plain import jsonable_fields

    dataset, data = cell.params["dataset"], jsonable_fields(config, without=("grid",))
    for other in set(DATASETS) - {dataset}:
        data.pop(f"train_{other}")
    for key in ("n_train", "n_test", "validation"):
        data[key] = {d: n for d, n in data[key].items() if d == dataset}
    data["elbo"] = {d: kl for d, kl in data["elbo"].items() if d == dataset and kl != "analytic"}
    if not data["elbo"]:   # no entry means analytic: such a cell keeps the settings it had before the key existed
        data.pop("elbo")
    return {k: v for k, v in data.items() if dataset == "freyface" or k not in FREYFACE_ONLY}


def cell_work(stated: dict, params: dict) -> tuple[float, float] | None:
    """``(training images per epoch, evaluation units)`` of a cell whose scoped config (:func:`cell_config`, as its
    run record states it) is ``stated``: its data set's training images under the ``n_train`` cap less a held-out
    ``validation`` part, and its test images under the ``n_test`` cap times ``test_samples`` (L̂_{0,S} draws S
    samples per image).  ``None`` for a data set without known sizes (:data:`FULL_SIZES`)."""
    dataset = params.get("dataset")
    if dataset not in FULL_SIZES:
        return None
    full_train, full_test = FULL_SIZES[dataset]

    def capped(key: str, full: int) -> int:
        cap = (stated.get(key) or {}).get(dataset)
        return min(int(cap), full) if cap else full

    held_out = int((stated.get("validation") or {}).get(dataset) or 0)
    return (float(capped("n_train", full_train) - held_out),
            float(capped("n_test", full_test) * int(stated.get("test_samples") or 1)))
