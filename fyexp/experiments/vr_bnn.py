r"""Bayesian neural networks on UCI regression with the VR bound: Li & Turner Tables 2 and 3 (§5.2).

One cell = one data set (the grid's ``dataset`` axis): every split × every method (VI = α 1, VR-0.5, VR-0.0,
VR-max = α −∞) trains as **one** batched computation (:func:`fyexp.train.batched_bnn.fit_group`: a
:class:`~fyexp.models.bnn.BatchedBNN` with weights of shape (methods · splits, K, P)) through the shared
:class:`~fyexp.train.Trainer`, on the minibatch VR bound (eq. 23)

    L̃_α(q; S) = 1/(1−α) log (1/K) Σ_k [p₀(θ_k) f̄_S(θ_k)^N / q(θ_k)]^{1−α},

one α per model (:class:`~fyexp.objectives.per_column.PerColumnVR`; VI with the closed-form KL as the authors'
code).  Each split has its own shuffling generator and each model its own noise generator, so a split's numbers
are those of training it alone (``tests/test_vr_bnn.py``).  The loss of a step is Σ_m −L̃_m / N_m, so Adam sees
each model's own gradient.

Metrics per (method, split), in original units (anchors.md): ``test_loglik`` = mean_n log-mean-exp_k
N(y_n; F_k(x_n) s_y + μ_y, σ² s_y²) and ``test_rmse`` of the predictive mean; the report averages them over the
splits (mean ± standard error, the paper's convention).  A data set missing from the data root (Year here) is a
skipped cell (:class:`~fyexp.errors.CellSkipped`, "data missing (... where to get it)"): no file, no failure.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field

from fyexp.data.uci import PAPER_NAMES, load_split, load_uci
from fyexp.errors import CellFailed, CellSkipped, DataMissing, FyexpError, require
from fyexp.experiments import register
from fyexp.experiments.grid import GridExperiment, PaperKeys, check_axes, metric
from fyexp.results import Cell
from fyexp.train import OptimizerConfig, TrainConfig
from fyexp.train.batched_bnn import BNNOptions, fit_group, group_by_size, threads

#: The methods of Tables 2–3 and their α; the code (position + 1) makes each model's random streams independent
#: of the grid (fyexp.train.batched_bnn.stream_seed).
METHODS: dict[str, float] = {"VI": 1.0, "VR-0.5": 0.5, "VR-0.0": 0.0, "VR-max": -math.inf}
METHOD_CODES = {name: i + 1 for i, name in enumerate(METHODS)}
DATASETS = ["boston", "concrete", "energy", "wine", "yacht", "protein", "year"]


@dataclass
class Grid:
    """The cells: one per UCI data set."""

    dataset: list[str] = field(default_factory=lambda: list(DATASETS))

    def __post_init__(self):
        check_axes(self)


@dataclass
class Config:
    """Settings of §5.2 and anchors.md; ``*_by_dataset`` override the defaults for the large sets."""

    grid: Grid = field(default_factory=Grid)
    methods: list[str] = field(default_factory=lambda: list(METHODS))
    n_splits: int | None = None  # null: every split of the data set
    hidden: int = 50
    hidden_by_dataset: dict[str, int] = field(default_factory=lambda: {"protein": 100, "year": 100})
    n_samples: int = 100
    n_samples_by_dataset: dict[str, int] = field(default_factory=lambda: {"protein": 10, "year": 10})
    epochs: int = 500
    epochs_by_dataset: dict[str, int] = field(default_factory=lambda: {"protein": 100, "year": 40})
    test_samples: int | None = None  # null: the training K (the authors' evaluation)
    prior_var: float = 1.0
    init_std: float = 0.1
    init_log_var: float = -10.0
    analytic_kl: bool = True
    num_threads: int | None = 1
    model_chunk: int | None = 4  # models per batched product (cache-sized on a CPU; null: all at once)
    train: TrainConfig = field(default_factory=lambda: TrainConfig(batch_size=32, optimizer=OptimizerConfig(lr=1e-3)))
    datasets: list[str] | None = None  # a spec written before ``grid:`` (legacy rows compare with it): the grid

    def __post_init__(self):
        if self.datasets is not None:
            self.grid = Grid(dataset=list(self.datasets))
        for m in self.methods:
            require(m in METHODS, "methods", f"names among {list(METHODS)}", self.methods)
        require(len(set(self.methods)) == len(self.methods) and self.methods, "methods", "distinct names", self.methods)
        require(self.n_splits is None or self.n_splits >= 1, "n_splits", "an integer >= 1 or null", self.n_splits)
        for key in ("hidden", "n_samples", "epochs"):
            values = [getattr(self, key), *getattr(self, f"{key}_by_dataset").values()]
            require(all(v >= 1 for v in values), key, "integers >= 1", values)
        require(self.test_samples is None or self.test_samples >= 1, "test_samples", "an integer >= 1 or null",
                self.test_samples)
        require(self.prior_var > 0, "prior_var", "a positive number", self.prior_var)

    def for_dataset(self, name: str) -> tuple[int, int, int]:
        """(hidden units, K, epochs) of data set ``name``."""
        return (self.hidden_by_dataset.get(name, self.hidden), self.n_samples_by_dataset.get(name, self.n_samples),
                self.epochs_by_dataset.get(name, self.epochs))


@register
class VRBNN(GridExperiment):
    name = "vr_bnn"
    Config = Config
    # A cell trains all four methods: each metric carries its method's row (``paper_row``, a column of the metric,
    # which takes precedence over the declaration's per-cell ``row``).
    paper_keys = (PaperKeys(tables=(("vr", "2"),), metrics=("test_loglik",), row=lambda cell: ""),
                  PaperKeys(tables=(("vr", "3"),), metrics=("test_rmse",), row=lambda cell: ""))

    def method(self, config: Config, params: dict) -> str:
        return "bnn"

    def cell_config(self, config: Config, cell: Cell) -> dict:
        """The whole config as JSON, the grid's data sets listed as ``datasets`` (the JSON of the Config before the
        grid was declared, so committed cells keep their settings hash)."""
        from fyexp.settings import jsonable

        data = jsonable(config)
        data["datasets"] = data.pop("grid")["dataset"]
        return data

    def measure(self, config: Config, cell: Cell, ctx):
        name = cell.params["dataset"]
        try:
            data = load_uci(None if ctx.data_dir is None else str(ctx.data_dir), name)
        except DataMissing as exc:  # absent: the cell skips; a damaged file stays an error (exit 2)
            raise CellSkipped(f"data missing ({exc})") from None
        if config.n_splits is not None and config.n_splits > data.n_splits:
            raise FyexpError(f"key 'n_splits': expected at most {data.n_splits} (the splits of UCI '{name}'), "
                             f"got {config.n_splits}")
        n_splits = data.n_splits if config.n_splits is None else config.n_splits
        splits = [(s, load_split(data, s)) for s in range(n_splits)]
        hidden, n_samples, epochs = config.for_dataset(name)
        train = dataclasses.replace(config.train, epochs=epochs)
        options = BNNOptions(config.prior_var, config.init_std, config.init_log_var, config.analytic_kl,
                             config.model_chunk)
        setting, out, tic = PAPER_NAMES.get(name, name), [], time.perf_counter()
        for i, group in enumerate(group_by_size(splits)):
            with threads(config.num_threads):
                result = fit_group(group, [(METHOD_CODES[m], METHODS[m]) for m in config.methods], hidden=hidden,
                                   n_samples=n_samples, train=train, seed=cell.seed, options=options,
                                   device=ctx.device, work_dir=ctx.work_dir / f"group{i}", subtask=ctx.subtask,
                                   label=f"{ctx.experiment}/{cell.key}", test_samples=config.test_samples)
            for a, method in enumerate(config.methods):
                for g, split in enumerate(result.splits):
                    for name_, values in (("test_loglik", result.test_loglik), ("test_rmse", result.test_rmse)):
                        value = float(values[a, g])
                        if not math.isfinite(value):
                            raise CellFailed(f"{cell.key}: non-finite {name_} for {method}, split {split}")
                        out.append(metric(name_, value, setting=setting, paper_row=method, method=method,
                                          split=split, hidden=hidden, n_samples=n_samples, epochs=epochs))
        return out + [metric("train_time_s", time.perf_counter() - tic, method="bnn", setting=setting,
                             label=f"{len(splits)} splits x {len(config.methods)} methods, batched")]
