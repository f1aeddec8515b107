r"""Training the splits × methods of one UCI data set as one batched model (Li & Turner §5.2, vr-bnn).

Every (method, split) pair is one model of a :class:`~fyexp.models.bnn.BatchedBNN` (weights of shape
(methods · splits, K, P), method-major: m = a·G + g), trained through the shared :class:`~fyexp.train.Trainer` on
the minibatch VR bound (eq. 23), one α per model (:class:`~fyexp.objectives.per_column.PerColumnVR`).  The loss
of a step is Σ_m −L̃_m / N_m, so Adam (elementwise) sees each model's own gradient.

Random streams, declared once (:func:`stream_seed`): each split shuffles its training points with its own
generator (code 0) and each model draws its initial values and weight noise from its own generator (code = the
method's code), so a split's numbers are those of training it alone (``tests/experiments/test_vr_bnn.py``).

Why not :mod:`fyexp.train.ensemble` (torch.func): measured by ``scripts/bench_vr.py`` (comparison 4) the batched
model is the faster of the two on this workload, and it keeps the recorded results bit for bit (an ensemble
member draws its batches from one permutation, where this composes the trainer's and the split's).
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np
import torch

from fyexp.models.bnn import BatchedBNN, RegressionBatch, predictive_metrics
from fyexp.objectives.per_column import PerColumnVR
from fyexp.train.trainer import TrainConfig, Trainer
from fyexp.train.variational import VariationalTask

if TYPE_CHECKING:
    from fyexp.data.uci import Standardized


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

    splits: list[int]
    test_loglik: np.ndarray  # (A, G)
    test_rmse: np.ndarray  # (A, G)
    history: list[dict]


@dataclass(frozen=True)
class BNNOptions:
    """The BNN and its training, shared by every model of a group: prior N(0, ``prior_var`` I), initialization
    (:class:`~fyexp.models.bnn.BatchedBNN`), closed-form KL for α = 1, ``model_chunk`` models per product."""

    prior_var: float = 1.0
    init_std: float = 0.1
    init_log_var: float = -10.0
    analytic_kl: bool = True
    model_chunk: int | None = None


def fit_group(splits: Sequence[tuple[int, Standardized]], methods: Sequence[tuple[int, float]], *, hidden: int,
              n_samples: int, train: TrainConfig, seed: int, options: BNNOptions = BNNOptions(), device: str = "cpu",
              work_dir=None, subtask=None, label: str = "vr-bnn", test_samples: int | None = None) -> GroupResult:
    """Train every (method, split) of ``splits`` (same train and test sizes) as one batched computation; a method
    is (its stream code ≥ 1, its α)."""
    split_ids = [s for s, _ in splits]
    x = torch.tensor(np.stack([d.x_train for _, d in splits]), dtype=torch.float32)
    y = torch.tensor(np.stack([d.y_train for _, d in splits]), dtype=torch.float32)
    gens = [torch.Generator().manual_seed(stream_seed(seed, s, code)) for code, _ in methods for s in split_ids]
    model = BatchedBNN(gens, x.shape[2], hidden, options.prior_var, options.init_std, options.init_log_var)
    model.model_chunk = options.model_chunk
    objective = PerColumnVR(n_samples=n_samples, alphas=tuple(alpha for _, alpha in methods for _ in split_ids),
                            analytic_kl=options.analytic_kl)
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
    return GroupResult(split_ids, ll.cpu().numpy().reshape(shape), rmse.cpu().numpy().reshape(shape),
                       history)


def group_by_size(splits: Sequence[tuple[int, Standardized]]) -> list[list[tuple[int, Standardized]]]:
    """Splits with equal train and test sizes, in order of first appearance (one batched run per group)."""
    groups: dict[tuple[int, int], list] = {}
    for s, d in splits:
        groups.setdefault((len(d.y_train), len(d.y_test)), []).append((s, d))
    return list(groups.values())
