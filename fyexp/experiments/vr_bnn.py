r"""Bayesian neural networks on UCI regression with the VR bound: Li & Turner Tables 2 and 3 (§5.2).

One cell = one data set: every split × every method (VI = α 1, VR-0.5, VR-0.0, VR-max = α −∞) trains as **one**
batched computation — a :class:`~fyexp.models.bnn.BatchedBNN` with weights of shape (methods · splits, K, P) —
through the shared :class:`~fyexp.train.Trainer`, on the minibatch VR bound (eq. 23)

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

import contextlib
import dataclasses
import math
import time
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import torch

from fyexp.data.uci import PAPER_NAMES, Standardized, load_split, load_uci
from fyexp.errors import CellFailed, CellSkipped, DataMissing, FyexpError, require
from fyexp.experiments import Experiment, register
from fyexp.models.bnn import BatchedBNN, RegressionBatch, predictive_metrics
from fyexp.objectives.per_column import PerColumnVR
from fyexp.results import Cell
from fyexp.train import OptimizerConfig, TrainConfig, Trainer, VariationalTask

#: The methods of Tables 2–3 and their α; the code makes each model's random streams independent of the grid.
METHODS: dict[str, float] = {"VI": 1.0, "VR-0.5": 0.5, "VR-0.0": 0.0, "VR-max": -math.inf}
METHOD_CODES = {name: i + 1 for i, name in enumerate(METHODS)}


@dataclass
class Config:
    """Settings of §5.2 and anchors.md; ``*_by_dataset`` override the defaults for the large sets."""

    datasets: list[str] = field(default_factory=lambda: ["boston", "concrete", "energy", "wine", "yacht", "protein",
                                                          "year"])
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

    def __post_init__(self):
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


@contextlib.contextmanager
def threads(n: int | None):
    """Run torch on ``n`` threads (None: leave as is); on a shared 2-core machine one thread is ~3× faster than two."""
    before = torch.get_num_threads()
    if n:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def stream_seed(seed: int, split: int, code: int = 0) -> int:
    """A generator seed for (run seed, split, method code); code 0 is the split's shuffling stream."""
    return (int(seed) * 1_000_003 + int(split) * 1_009 + int(code) * 17 + 1) % (2 ** 63)


class BNNTask(VariationalTask):
    """The batched BNNs of one group of equal-sized splits; the trainer's batches are *positions* 0…N−1, which
    each split maps through its own per-epoch permutation (drawn from its own generator)."""

    def __init__(self, model: BatchedBNN, objective: PerColumnVR, x: torch.Tensor, y: torch.Tensor,
                 split_generators: Sequence[torch.Generator]):
        super().__init__(model, objective)
        self.x, self.y, self.split_generators = x, y, list(split_generators)
        self.n_data = torch.full((x.shape[0],), x.shape[1], dtype=torch.long)
        self.order = torch.arange(x.shape[1]).expand(x.shape[0], -1)

    def configure_optimizers(self):
        device = self.model.mean_param.device
        self.x, self.y, self.n_data = self.x.to(device), self.y.to(device), self.n_data.to(device)
        return super().configure_optimizers()

    def on_epoch_start(self, epoch: int) -> None:
        n = self.x.shape[1]
        self.order = torch.stack([torch.randperm(n, generator=g) for g in self.split_generators]).to(self.x.device)

    def loss(self, batch):
        positions = batch[0] if isinstance(batch, (tuple, list)) else batch
        index = self.order[:, positions]  # (G, B)
        x = torch.gather(self.x, 1, index.unsqueeze(-1).expand(-1, -1, self.x.shape[2]))
        y = torch.gather(self.y, 1, index)
        bound, parts = self.objective(self.model, RegressionBatch(x, y, self.n_data))
        n = self.n_data.repeat(self.model.n_models // len(self.n_data)).to(bound.dtype)
        return -(bound / n).sum(), {"bound_per_point": (bound / n).mean().detach(), **parts}

    def extra_state(self) -> dict:
        return {"split": [g.get_state() for g in self.split_generators],
                "model": [g.get_state() for g in self.model.generators], "order": self.order.cpu()}

    def load_extra_state(self, state: dict) -> None:
        for g, s in zip(self.split_generators, state["split"]):
            g.set_state(s)
        for g, s in zip(self.model.generators, state["model"]):
            g.set_state(s)
        self.order = state["order"].to(self.x.device)


@dataclass
class GroupResult:
    """Per model (method-major, m = a·G + g): test log-likelihood and RMSE, and the training history."""

    methods: list[str]
    splits: list[int]
    test_loglik: np.ndarray  # (A, G)
    test_rmse: np.ndarray  # (A, G)
    history: list[dict]


def fit_group(splits: Sequence[tuple[int, Standardized]], methods: Sequence[str], *, hidden: int, n_samples: int,
              train: TrainConfig, seed: int, config: Config, device: str = "cpu", work_dir=None, subtask=None,
              label: str = "vr-bnn", test_samples: int | None = None) -> GroupResult:
    """Train every (method, split) of ``splits`` (same train and test sizes) as one batched computation."""
    split_ids = [s for s, _ in splits]
    x = torch.tensor(np.stack([d.x_train for _, d in splits]), dtype=torch.float32)
    y = torch.tensor(np.stack([d.y_train for _, d in splits]), dtype=torch.float32)
    gens = [torch.Generator().manual_seed(stream_seed(seed, s, METHOD_CODES[a])) for a in methods for s in split_ids]
    model = BatchedBNN(gens, x.shape[2], hidden, config.prior_var, config.init_std, config.init_log_var)
    model.model_chunk = config.model_chunk
    objective = PerColumnVR(n_samples=n_samples, alphas=tuple(METHODS[a] for a in methods for _ in split_ids),
                            analytic_kl=config.analytic_kl)
    task = BNNTask(model, objective, x, y, [torch.Generator().manual_seed(stream_seed(seed, s)) for s in split_ids])
    trainer = Trainer(dataclasses.replace(train, seed=seed), device=device, work_dir=work_dir, subtask=subtask,
                      label=label)
    history = trainer.fit(task, (torch.arange(x.shape[1]),))

    model.eval()
    x_test = torch.tensor(np.stack([d.x_test for _, d in splits]), dtype=torch.float32, device=device)
    f, noise_var = model.predictive(x_test, test_samples or n_samples)
    reps = len(methods)
    y_test = torch.tensor(np.stack([d.y_test for _, d in splits]), dtype=torch.float32, device=device).repeat(reps, 1)
    y_mean = torch.tensor([d.y_mean for _, d in splits], device=device).repeat(reps)
    y_std = torch.tensor([d.y_std for _, d in splits], device=device).repeat(reps)
    ll, rmse = predictive_metrics(f, noise_var, y_test, y_mean, y_std)
    shape = (len(methods), len(split_ids))
    return GroupResult(list(methods), split_ids, ll.cpu().numpy().reshape(shape), rmse.cpu().numpy().reshape(shape),
                       history)


def group_by_size(splits: Sequence[tuple[int, Standardized]]) -> list[list[tuple[int, Standardized]]]:
    """Splits with equal train and test sizes, in order of first appearance (one batched run per group)."""
    groups: dict[tuple[int, int], list] = {}
    for s, d in splits:
        groups.setdefault((len(d.y_train), len(d.y_test)), []).append((s, d))
    return list(groups.values())


@register
class VRBNN(Experiment):
    name = "vr_bnn"
    Config = Config

    def cells(self, config: Config, seeds):
        return [Cell("bnn", seed, {"dataset": d}) for d in config.datasets for seed in seeds]

    def run_cell(self, config: Config, cell: Cell, ctx):
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
        rows, tic = [], time.perf_counter()
        for i, group in enumerate(group_by_size(splits)):
            with threads(config.num_threads):
                result = fit_group(group, config.methods, hidden=hidden, n_samples=n_samples, train=train,
                                   seed=cell.seed, config=config, device=ctx.device,
                                   work_dir=ctx.work_dir / f"group{i}", subtask=ctx.subtask,
                                   label=f"{ctx.experiment}/{cell.key}", test_samples=config.test_samples)
            for a, method in enumerate(result.methods):
                for g, split in enumerate(result.splits):
                    for table, metric, values in (("2", "test_loglik", result.test_loglik),
                                                  ("3", "test_rmse", result.test_rmse)):
                        value = float(values[a, g])
                        if not math.isfinite(value):
                            raise CellFailed(f"{cell.key}: non-finite {metric} for {method}, split {split}")
                        rows.append({"paper": "vr", "table": table, "setting": PAPER_NAMES.get(name, name),
                                     "paper_row": method, "method": method, "metric": metric, "value": value,
                                     "split": split, "hidden": hidden, "n_samples": n_samples, "epochs": epochs})
        rows.append({"method": "bnn", "metric": "train_time_s", "value": time.perf_counter() - tic,
                     "setting": PAPER_NAMES.get(name, name), "label": f"{len(splits)} splits x "
                     f"{len(config.methods)} methods, batched"})
        return rows
