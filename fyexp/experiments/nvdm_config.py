"""The settings of the nvdm runner (FYVI App. D; docs/protocols.md, FYVI Table 3): one NVDM / FY-NVDM run and its study.

Torch-free: reading a spec (``fyexp show``) imports this module, not the runner's models."""

from __future__ import annotations

from dataclasses import field
from typing import Annotated, ClassVar, Literal

from fyexp.core.constraints import Interval, NonNegativeFloat, PositiveInt, settings
from fyexp.train import OptimizerConfig, TrainConfig

# the parameters that name a cell (its identity), as paths into the config; the names are those of the first runs
IDENTITY = {"rho_prime": "rho_prime", "learning_rate": "train.optimizer.lr", "batch_size": "train.batch_size",
            "epochs": "train.epochs", "alternating_epochs": "alternating_epochs", "n_topics": "n_topics",
            "beta": "beta"}


@settings
class NVDMConfig:
    """Hyperparameters of one NVDM / FY-NVDM run and of its tuning study (FYVI Appendix D)."""

    # the flat names of the first studies' best_params.yaml → config paths (fyexp.spec.tuning.with_best: ``run --best``
    # and the freshness of its rows)
    PARAM_ALIASES: ClassVar[dict[str, str]] = IDENTITY
    observation: Literal["multinomial", "entmax"] = "multinomial"
    rho_prime: Annotated[float, Interval(float, 1, None)] = 1.314
    n_topics: PositiveInt = 50
    hidden: PositiveInt = 500
    beta: NonNegativeFloat = 0.01
    train: TrainConfig = field(default_factory=lambda: TrainConfig(epochs=500, batch_size=64,
                                                                   optimizer=OptimizerConfig(lr=5e-5)))
    alternating_epochs: PositiveInt = 1
    perplexity_samples: PositiveInt = 20
    coherence_sizes: list[Annotated[int, Interval(int, 2, None)]] = field(default_factory=lambda: [5, 10, 15, 20, 25])
    embedder: str = ""
    cache_dir: str = ""
    n_trials: PositiveInt = 100
    search: dict = field(default_factory=dict)
    tune_seed: int = 0
    heartbeat_interval: int = 30
    grace_period: int = 120

    def __post_init__(self):
        from fyexp.spec.tuning import check_search

        check_search(self.search, type(self), tuple(IDENTITY.values()))

    @property
    def alpha(self) -> float:
        """The observation model's Tsallis index: ρ′ for FY-NVDM, 1 (softmax) for NVDM."""
        return self.rho_prime if self.observation == "entmax" else 1.0


Config = NVDMConfig   # the name fyexp.experiments.get_config_class reads


def cell_config(config: NVDMConfig, cell) -> dict:
    """A cell's settings (:func:`fyexp.spec.settings.scoped_config`): the whole config less the grid listing, whose
    values the cell carries in its params."""
    from fyexp.spec.settings import jsonable

    data = jsonable(config)
    data.pop("grid", None)
    return data


# 20 Newsgroups as the runner reads it (fyexp.data.newsgroups): the documents of its training and test splits, as
# every run records them (its ``documents`` rows: 11,290 train, 1,000 validation, 6,505 test)
TRAIN_DOCUMENTS, TEST_DOCUMENTS = 11_290, 6_505


def cell_work(stated: dict, params: dict) -> tuple[float, float]:
    """``(training documents per stated epoch, evaluation units)`` of a cell whose scoped config (:func:`cell_config`,
    as its run record states it) is ``stated``.  One stated epoch of :func:`fyexp.train.nvdm.train_nvdm` alternates
    ``alternating_epochs`` passes of the encoder and as many of the decoder over the training documents (its
    recorded ``epoch_time_s`` is of the same 2 × ``alternating_epochs`` passes); the evaluation reads each test
    document once for its reconstruction error and, for NVDM (multinomial), ``perplexity_samples`` times more.
    Only ratios between cells of one method are used (:func:`fyexp.run.estimate.scaled_time`)."""
    alternating = int(stated.get("alternating_epochs") or 1)
    samples = int(stated.get("perplexity_samples") or 0) if stated.get("observation") == "multinomial" else 0
    return float(TRAIN_DOCUMENTS * 2 * alternating), float(TEST_DOCUMENTS * (1 + samples))


__all__ = ["cell_config", "cell_work", "Config", "IDENTITY", "NVDMConfig", "TEST_DOCUMENTS", "TRAIN_DOCUMENTS"]
