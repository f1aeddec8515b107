"""The one training loop of fyexp's neural experiments: a plain PyTorch loop with checkpoints and guards.

What it adds to a hand-written loop, and nothing else:

* device placement (``'cpu'`` / ``'cuda'``), optional bf16 autocast on CUDA (``amp``) and ``torch.compile``;
* two data paths: a **tensor fast path** (a tensor or tuple of tensors, moved to the device once and cut
  into shuffled index batches — no DataLoader) for data sets that fit in device memory, and a
  :class:`~torch.utils.data.DataLoader` path for any other :class:`~torch.utils.data.Dataset`;
* reproducibility: :func:`seed_everything` seeds python, numpy and torch; the shuffling has its own
  generator; on the CPU the same seed gives the same losses bit for bit;
* a checkpoint after every epoch (model, optimizers, every RNG state, epoch, metric history), written
  atomically to ``work_dir/checkpoint.pt``: an interrupted run resumes there and ends exactly where an
  uninterrupted one ends; a finished run is not retrained;
* a per-epoch metric log ``work_dir/metrics.csv`` and a progress bar with the loss and examples/s;
* a guard that stops on a NaN/inf loss or gradient with :class:`fyexp.errors.CellFailed` naming the run
  and the epoch (checked on the device, synchronised only every ``log_every`` steps).

The model-specific part is a :class:`TrainTask`: the loss of a batch, the optimizers, which of them step
in an epoch (e.g. NVDM alternates encoder and decoder epochs), a validation hook and an epoch-end
callback that may stop training (an ``optuna.TrialPruned`` raised there propagates).

Example
-------
>>> import torch
>>> from torch import nn
>>> from fyexp.train import TrainConfig, TrainTask, Trainer, seed_everything
>>> class Regression(TrainTask):
...     def __init__(self):
...         self.model = nn.Linear(3, 1)
...     def configure_optimizers(self):
...         return {"all": torch.optim.SGD(self.model.parameters(), lr=0.1)}
...     def loss(self, batch):
...         x, y = batch
...         mse = (self.model(x).squeeze(-1) - y).pow(2).mean()
...         return mse, {"mse": mse}
>>> seed_everything(0)
>>> x = torch.randn(64, 3); y = x.sum(-1)
>>> history = Trainer(TrainConfig(epochs=2, batch_size=16, seed=0)).fit(Regression(), (x, y))
>>> [round(h["epoch"]) for h in history]
[1, 2]
"""

from __future__ import annotations

import io
import math
import os
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

from fyexp.errors import CellFailed, require
from fyexp.io import atomic_write_bytes, atomic_write_text
from fyexp.train.config import OptimizerConfig, ScheduleConfig, make_optimizer

CHECKPOINT = "checkpoint.pt"
METRICS = "metrics.csv"

__all__ = ["TrainConfig", "TrainTask", "Trainer", "seed_everything", "rng_state", "set_rng_state",
           "TensorBatches"]


# --------------------------------------------------------------------------------------------- seeding
def seed_everything(seed: int) -> None:
    """Seed python's ``random``, numpy's global generator and torch (CPU and every CUDA device)."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def rng_state() -> dict:
    """Every global RNG state (python, numpy, torch CPU, torch CUDA when present), for a checkpoint."""
    state = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: Mapping) -> None:
    """Restore what :func:`rng_state` saved."""
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


# ------------------------------------------------------------------------------------------- the task
class TrainTask:
    """The model-specific part of a training run.  Subclasses set ``self.model`` and override the hooks.

    Required: :meth:`configure_optimizers` and :meth:`loss`.  The rest have sensible defaults.
    """

    model: nn.Module
    train_config: "TrainConfig"  # set by the Trainer before configure_optimizers

    def configure_optimizers(self) -> dict[str, torch.optim.Optimizer]:
        """The optimizers by name (called once, after the model is on its device).

        Default: one optimizer over every parameter, as ``train_config.optimizer`` describes it.
        """
        return {"main": make_optimizer(self.train_config.optimizer, self.model.parameters())}

    def loss(self, batch: Any) -> tuple[torch.Tensor, Mapping[str, torch.Tensor | float]]:
        """The scalar to minimise for one batch, and named quantities to log (batch means, tensors or floats).

        Logged tensors stay on the device; the trainer averages them over the epoch (weighted by batch size)
        and synchronises only when it reports them.
        """
        raise NotImplementedError

    def optimizers_for_epoch(self, epoch: int) -> Iterable[str]:
        """Names of the optimizers that step in ``epoch`` (1-based); default: all of them."""
        return list(self._optimizer_names)

    def on_epoch_start(self, epoch: int) -> None:
        """Called before the first batch of ``epoch`` (1-based)."""

    def validate(self, epoch: int) -> Mapping[str, float]:
        """Metrics on held-out data after ``epoch``; the trainer runs it under ``torch.no_grad`` in eval mode."""
        return {}

    def on_epoch_end(self, epoch: int, metrics: Mapping[str, float]) -> bool:
        """Called after the checkpoint of ``epoch``; return True to stop training (exceptions propagate)."""
        return False

    def extra_state(self) -> dict:
        """Additional state to checkpoint (e.g. a scheduler's); restored by :meth:`load_extra_state`."""
        return {}

    def load_extra_state(self, state: dict) -> None:
        """Restore what :meth:`extra_state` returned."""

    _optimizer_names: Sequence[str] = ()


# ------------------------------------------------------------------------------------------- the data
class TensorBatches:
    """Shuffled mini-batches of tensors that already live on the device (the small-data fast path).

    Parameters
    ----------
    tensors : tuple of Tensor, each of shape (N, ...)
        Moved to ``device`` once.
    batch_size : int
    device : str
    generator : torch.Generator
        A CPU generator for the permutation of each epoch (checkpointed by the trainer).
    shuffle, drop_last : bool
    """

    def __init__(self, tensors: Sequence[torch.Tensor], batch_size: int, device: str,
                 generator: torch.Generator, shuffle: bool = True, drop_last: bool = False):
        self.tensors = tuple(t.to(device) for t in tensors)
        lengths = {len(t) for t in self.tensors}
        if len(lengths) != 1:
            raise ValueError(f"tensors of different lengths {sorted(lengths)} cannot be batched together")
        self.n = lengths.pop()
        self.batch_size, self.device, self.generator = batch_size, device, generator
        self.shuffle, self.drop_last = shuffle, drop_last

    def __len__(self) -> int:
        return self.n // self.batch_size if self.drop_last else math.ceil(self.n / self.batch_size)

    def batch_indices(self) -> Iterator[torch.Tensor]:
        """The index tensor of every batch of one epoch (one permutation drawn from ``generator``)."""
        if self.shuffle:
            order = torch.randperm(self.n, generator=self.generator).to(self.device, non_blocking=True)
        else:
            order = torch.arange(self.n, device=self.device)
        for b in range(len(self)):
            yield order[b * self.batch_size:(b + 1) * self.batch_size]

    def __iter__(self) -> Iterator[tuple[torch.Tensor, ...]]:
        for index in self.batch_indices():
            yield tuple(t[index] for t in self.tensors)


def _to_device(batch: Any, device: str) -> Any:
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=True)
    if isinstance(batch, (list, tuple)):
        return type(batch)(_to_device(b, device) for b in batch)
    if isinstance(batch, dict):
        return {k: _to_device(v, device) for k, v in batch.items()}
    return batch


def _batch_size(batch: Any) -> int:
    while isinstance(batch, (list, tuple, dict)):
        batch = next(iter(batch.values())) if isinstance(batch, dict) else batch[0]
    return len(batch)


# ------------------------------------------------------------------------------------------ the loop
@dataclass
class TrainConfig:
    """How to train (the *what* is the task).

    A spec's ``train:`` block is this dataclass, nested (``optimizer:`` and ``schedule:`` are
    :class:`~fyexp.train.config.OptimizerConfig` and :class:`~fyexp.train.config.ScheduleConfig`); the runner
    sets ``seed`` per cell.  ``num_workers=None`` picks 0 on the CPU and up to 4 on CUDA (DataLoader path
    only).  ``amp`` uses bf16 autocast on CUDA (no gradient scaler needed) and is ignored on the CPU.
    ``log_every`` is how often (in steps) the progress bar is refreshed and the NaN guard synchronises.
    ``ensemble`` asks the runner to train the seeds of a cell as one model (:meth:`Trainer.fit_ensemble`,
    :mod:`fyexp.train.ensemble`): meant for a GPU, where one small model is launch-bound; off by default, since
    on the CPU it does not pay — ``scripts/bench_grid.py`` on the shared 2-core machine (load average ≈ 11),
    12 FYVI Table 2 networks: 0.91× the throughput of one after another at 1 thread, and at 2 threads 2.1× of
    a 2-thread sequential run that is itself ~9× slower than 1 thread; one single-threaded cell per core
    (``fyexp run NAME --executor local``) is the CPU's best use.
    """

    epochs: int = 1
    batch_size: int = 64
    optimizer: OptimizerConfig = field(default_factory=OptimizerConfig)
    schedule: ScheduleConfig = field(default_factory=ScheduleConfig)
    seed: int = 0
    amp: bool = False
    compile: bool = False
    num_workers: int | None = None
    drop_last: bool = False
    log_every: int = 50
    check_grads: bool = True
    ensemble: bool = False

    def __post_init__(self):
        require(self.epochs >= 1, "epochs", "an integer >= 1", self.epochs)
        require(self.batch_size >= 1, "batch_size", "an integer >= 1", self.batch_size)
        require(self.log_every >= 1, "log_every", "an integer >= 1", self.log_every)


class Trainer:
    """Runs a :class:`TrainTask` for ``config.epochs`` epochs with checkpoints in ``work_dir``.

    Parameters
    ----------
    config : TrainConfig
    device : str
        ``'cpu'`` or ``'cuda'`` (e.g. ``ctx.device``).
    work_dir : Path, optional
        Where the checkpoint and ``metrics.csv`` go (e.g. ``ctx.work_dir``); None keeps nothing.
    subtask : callable, optional
        ``subtask(description, total) -> advance(n, **fields)``, e.g. ``ctx.subtask``, for a progress bar.
    label : str
        Names the run in error messages (e.g. ``"fy-vae/<cell key>"``).
    """

    def __init__(self, config: TrainConfig, *, device: str = "cpu", work_dir: Path | str | None = None,
                 subtask: Callable[[str, float | None], Callable[..., None]] | None = None, label: str = "training"):
        self.config, self.device, self.label = config, device, label
        self.work_dir = Path(work_dir) if work_dir is not None else None
        self.subtask = subtask
        self.history: list[dict] = []

    # ------------------------------------------------------------------------------------------ data
    def _batches(self, data: Any, generator: torch.Generator) -> Iterable:
        cfg = self.config
        if isinstance(data, torch.Tensor):
            data = (data,)
        if isinstance(data, (tuple, list)) and all(isinstance(t, torch.Tensor) for t in data):
            return TensorBatches(data, cfg.batch_size, self.device, generator, drop_last=cfg.drop_last)
        if isinstance(data, Dataset):
            cuda = self.device.startswith("cuda")
            workers = cfg.num_workers if cfg.num_workers is not None else (min(4, os.cpu_count() or 1) if cuda else 0)
            return DataLoader(data, batch_size=cfg.batch_size, shuffle=True, generator=generator,
                              drop_last=cfg.drop_last, num_workers=workers, pin_memory=cuda,
                              persistent_workers=workers > 0)
        raise TypeError(f"{self.label}: training data must be a tensor, a tuple of tensors or a Dataset, "
                        f"got {type(data).__name__}")

    # ---------------------------------------------------------------------------------- checkpoints
    @property
    def checkpoint_path(self) -> Path | None:
        return self.work_dir / CHECKPOINT if self.work_dir is not None else None

    def _save(self, task: TrainTask, optimizers: dict, generator: torch.Generator, epoch: int, done: bool) -> None:
        if self.work_dir is not None:
            save_checkpoint(self.work_dir, task, optimizers, generator, rng_state(), self.history, epoch, done)

    def _load(self, task: TrainTask, optimizers: dict, generator: torch.Generator) -> tuple[int, bool]:
        state = load_checkpoint(self.work_dir, self.device, task, optimizers, generator)
        if state is None:
            return 0, False
        set_rng_state(state["rng"])
        self.history = list(state["history"])
        return int(state["epoch"]), bool(state["done"])

    # ----------------------------------------------------------------------------------------- guard
    def _fail(self, epoch: int, what: str) -> None:
        raise failure(self.label, epoch, what)

    # ------------------------------------------------------------------------------------------- fit
    def fit(self, task: TrainTask, train_data: Any) -> list[dict]:
        """Train (or resume, or return at once if already finished); return the per-epoch metric history.

        Each history row holds ``epoch``, the epoch means of the task's logged values (``train_<name>``, and
        ``train_loss``), ``examples_per_s``, ``epoch_time_s`` and the validation metrics.
        """
        cfg = self.config
        task.model.to(self.device)
        task.train_config = cfg
        optimizers = task.configure_optimizers()
        task._optimizer_names = tuple(optimizers)
        remember_initial_lr(optimizers.values())
        generator = torch.Generator().manual_seed(cfg.seed)
        start_epoch, done = self._load(task, optimizers, generator)
        if done:
            return self.history
        batches = self._batches(train_data, generator)
        loss_fn = torch.compile(task.loss) if cfg.compile else task.loss
        cuda = self.device.startswith("cuda")
        autocast = torch.autocast("cuda", dtype=torch.bfloat16, enabled=cfg.amp and cuda)
        params = [p for p in task.model.parameters() if p.requires_grad]
        steps = len(batches)
        advance = self.subtask(self.label, (cfg.epochs - start_epoch) * steps) if self.subtask else None
        if advance is not None:
            advance(0, info="")

        for epoch in range(start_epoch + 1, cfg.epochs + 1):
            task.model.train()
            apply_schedule(optimizers.values(), cfg.schedule.factor(epoch))
            task.on_epoch_start(epoch)
            active = [optimizers[name] for name in task.optimizers_for_epoch(epoch)]
            sums: dict[str, torch.Tensor] = {}
            bad_loss = torch.zeros((), dtype=torch.bool, device=self.device)
            bad_grad = torch.zeros((), dtype=torch.bool, device=self.device)
            seen, since_log, tic = 0, 0, time.perf_counter()
            for step, batch in enumerate(batches, 1):
                batch = _to_device(batch, self.device)
                n = _batch_size(batch)
                with autocast:
                    loss, logs = loss_fn(batch)
                for opt in optimizers.values():
                    opt.zero_grad(set_to_none=True)
                loss.backward()
                bad_loss |= ~torch.isfinite(loss.detach())
                if cfg.check_grads:
                    grads = [p.grad for p in params if p.grad is not None]
                    if grads:
                        bad_grad |= ~torch.isfinite(torch.stack(torch._foreach_norm(grads)).sum())
                for opt in active:
                    opt.step()
                for key, value in {"loss": loss, **logs}.items():
                    value = torch.as_tensor(value, device=self.device).detach().float() * n
                    sums[key] = sums[key] + value if key in sums else value
                seen += n
                since_log += 1
                if step % cfg.log_every == 0 or step == steps:
                    if bool(bad_loss):
                        self._fail(epoch, "loss")
                    if bool(bad_grad):
                        self._fail(epoch, "gradient")
                    if advance is not None:
                        rate = seen / max(time.perf_counter() - tic, 1e-9)
                        advance(since_log, info=f"epoch {epoch}/{cfg.epochs} loss {float(sums['loss']) / seen:.4g} "
                                               f"{rate:,.0f} ex/s")
                    since_log = 0
            elapsed = time.perf_counter() - tic
            row = {"epoch": epoch, "lr": next(iter(optimizers.values())).param_groups[0]["lr"],
                   "train_loss": float(sums.pop("loss")) / seen}
            row.update({f"train_{k}": float(v) / seen for k, v in sums.items()})
            row.update({"examples_per_s": seen / elapsed, "epoch_time_s": elapsed})
            task.model.eval()
            with torch.no_grad():
                row.update({k: float(v) for k, v in task.validate(epoch).items()})
            self.history.append(row)
            self._save(task, optimizers, generator, epoch, done=epoch == cfg.epochs)
            if task.on_epoch_end(epoch, row):
                self._save(task, optimizers, generator, epoch, done=True)
                break
        return self.history

    def fit_ensemble(self, members: Sequence[Any]) -> list:
        """Train ``members`` (:class:`fyexp.train.ensemble.EnsembleMember`, e.g. the seeds of a cell) as one
        model with a leading ensemble dimension; one :class:`~fyexp.train.ensemble.MemberResult` per member.

        Each member equals its solo :meth:`fit` (same seed, work_dir) to float tolerance and writes the same
        checkpoint; ``self.work_dir`` is not used (each member has its own), ``self.label`` names the progress bar.
        """
        from fyexp.train.ensemble import fit_ensemble
        return fit_ensemble(self.config, members, device=self.device, subtask=self.subtask, label=self.label)


# --------------------------------------------------------------- pieces shared with the ensemble
def failure(label: str, epoch: int, what: str) -> CellFailed:
    """The error of a run whose ``what`` (loss or gradient) became non-finite in ``epoch``."""
    return CellFailed(f"{label}: non-finite {what} in epoch {epoch}; training stopped")


def remember_initial_lr(optimizers: Iterable[torch.optim.Optimizer]) -> None:
    """Keep each group's base rate as ``initial_lr`` (checkpointed with the optimizer); the schedule scales it."""
    for opt in optimizers:
        for group in opt.param_groups:
            group.setdefault("initial_lr", group["lr"])


def apply_schedule(optimizers: Iterable[torch.optim.Optimizer], factor: float) -> None:
    """lr = initial_lr × factor in every group (the schedule's factor of the epoch)."""
    for opt in optimizers:
        for group in opt.param_groups:
            group["lr"] = group["initial_lr"] * factor


def save_checkpoint(work_dir: Path, task: TrainTask, optimizers: Mapping[str, torch.optim.Optimizer],
                    generator: torch.Generator, rng: Mapping, history: list[dict], epoch: int, done: bool) -> None:
    """Write ``work_dir/checkpoint.pt`` (model, optimizers, RNG states, epoch, history) and ``metrics.csv``
    atomically; the ensemble writes each member's in the same format, so either trainer resumes either's."""
    work_dir.mkdir(parents=True, exist_ok=True)
    state = {"epoch": epoch, "done": done, "model": task.model.state_dict(),
             "optimizers": {k: o.state_dict() for k, o in optimizers.items()},
             "rng": dict(rng), "shuffle_rng": generator.get_state(), "history": history,
             "extra": task.extra_state()}
    buffer = io.BytesIO()
    torch.save(state, buffer)
    atomic_write_bytes(work_dir / CHECKPOINT, buffer.getvalue())
    columns = list(dict.fromkeys(k for row in history for k in row))
    lines = [",".join(columns)] + [",".join(_csv_value(row.get(c)) for c in columns) for row in history]
    atomic_write_text(work_dir / METRICS, "\n".join(lines) + "\n")


def load_checkpoint(work_dir: Path | None, device: str, task: TrainTask,
                    optimizers: Mapping[str, torch.optim.Optimizer], generator: torch.Generator) -> dict | None:
    """Restore model, optimizers, shuffling generator and task state from ``work_dir/checkpoint.pt``; return the
    checkpoint (its ``rng``, ``history``, ``epoch``, ``done`` for the caller), or None when there is none."""
    path = work_dir / CHECKPOINT if work_dir is not None else None
    if path is None or not path.is_file():
        return None
    state = torch.load(path, map_location=device, weights_only=False)
    task.model.load_state_dict(state["model"])
    for name, opt in optimizers.items():
        opt.load_state_dict(state["optimizers"][name])
    generator.set_state(state["shuffle_rng"])
    task.load_extra_state(state["extra"])
    return state


def _csv_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)
