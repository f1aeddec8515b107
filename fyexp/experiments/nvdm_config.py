"""The settings of the nvdm runner (FYVI App. D; docs/protocols.md, FYVI Table 3): one NVDM / FY-NVDM run and its study.

Torch-free: reading a spec (``fyexp show``) imports this module, not the runner's models."""

from __future__ import annotations

from dataclasses import field
from typing import Annotated, ClassVar, Literal

from fyexp.constraints import Interval, NonNegativeFloat, PositiveInt, settings
from fyexp.train import OptimizerConfig, TrainConfig

# the parameters that name a cell (its identity), as paths into the config; the names are those of the first runs
IDENTITY = {"rho_prime": "rho_prime", "learning_rate": "train.optimizer.lr", "batch_size": "train.batch_size",
            "epochs": "train.epochs", "alternating_epochs": "alternating_epochs", "n_topics": "n_topics",
            "beta": "beta"}


@settings
class NVDMConfig:
    """Hyperparameters of one NVDM / FY-NVDM run and of its tuning study (FYVI Appendix D)."""

    # the flat names of the first studies' best_params.yaml → config paths (fyexp.tuning.with_best: ``run --best``
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
        from fyexp.tuning import check_search

        check_search(self.search, type(self), tuple(IDENTITY.values()))

    @property
    def alpha(self) -> float:
        """The observation model's Tsallis index: ρ′ for FY-NVDM, 1 (softmax) for NVDM."""
        return self.rho_prime if self.observation == "entmax" else 1.0


Config = NVDMConfig   # the name fyexp.experiments.get_config_class reads


def cell_config(config: NVDMConfig, cell) -> dict:
    """A cell's settings (:func:`fyexp.settings.scoped_config`): the whole config less the grid listing, whose
    values the cell carries in its params."""
    from fyexp.settings import jsonable

    data = jsonable(config)
    data.pop("grid", None)
    return data


cell_work = None
"""Its cells declare no work (the experiment's :meth:`~fyexp.experiments.base.Experiment.work` is None), so the
plan never scales their times from another profile's cells (:class:`fyexp.plan_scaled.LightWork`)."""


__all__ = ["cell_config", "cell_work", "Config", "IDENTITY", "NVDMConfig"]
