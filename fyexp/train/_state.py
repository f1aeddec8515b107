"""What a training run is made of and how it is saved, shared by :mod:`.trainer` and :mod:`.ensemble`.

The settings (:class:`~fyexp.train.config.TrainConfig`), the model-specific task (:class:`TrainTask`), the tensor batches
(:class:`TensorBatches`), the global RNG states, the learning-rate schedule applied to the optimizers' groups,
and the checkpoint format (``work_dir/checkpoint.pt`` + ``metrics.csv``) that both trainers write and read, so
either resumes the other's.  Neither trainer imports the other for these (``tests/project/test_architecture.py``).

A checkpoint is data, never code: it is read with ``torch.load(weights_only=True)`` (PyTorch's restricted
unpickler: tensors, dicts, lists, tuples, numbers, strings; no class outside its allow-list is built, no function
called), so a work folder from someone else cannot run a payload on resume or on ``run --force``.  Everything a
checkpoint holds besides the tensors is plain data: numpy's RNG state is saved as a tensor of its 624 key words and
numbers (:func:`rng_to_data`), python's as its tuple of integers.  A file refused by that reader, or one that is
not a checkpoint of this format, is one warning naming it (:func:`read_checkpoint`) and the run trains from
scratch: the checkpoint only saves time (a resumed run equals an uninterrupted one bit for bit), so discarding it
loses minutes and refusing to go on would leave the user a folder that every later run stops on.  Checkpoints
written before this format (numpy's state pickled as an ``ndarray``) still resume: the reader allows what numpy
needs to rebuild that array (:data:`LEGACY_NUMPY_GLOBALS`: the array type, its uint32 dtype and their
reconstructor), which build arrays and call nothing else.
"""

from __future__ import annotations

import io
import math
import pickle
import random
import re
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

import numpy as np
import torch
from torch import nn

from fyexp.core.errors import CellFailed
from fyexp.store.io import atomic_write_bytes, atomic_write_text
from fyexp.train.config import TrainConfig, make_optimizer

CHECKPOINT = "checkpoint.pt"
METRICS = "metrics.csv"


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


def rng_to_data(state: Mapping) -> dict:
    """:func:`rng_state`'s value as plain data for a checkpoint: numpy's ``('MT19937', key, pos, has_gauss,
    gauss)`` becomes a mapping with the 624 key words as an int64 tensor (the rest is as saved: tensors and
    python's tuple of integers)."""
    data = dict(state)
    if "numpy" not in state:
        return data
    kind, key, pos, has_gauss, gauss = state["numpy"]
    data["numpy"] = {"kind": str(kind), "key": torch.from_numpy(np.asarray(key, dtype=np.int64)),
                     "pos": int(pos), "has_gauss": int(has_gauss), "gauss": float(gauss)}
    return data


def rng_from_data(data: Mapping) -> dict:
    """The inverse of :func:`rng_to_data`; a legacy checkpoint's numpy tuple is returned as it is."""
    state = dict(data)
    saved = data.get("numpy")
    if isinstance(saved, Mapping):
        state["numpy"] = (saved["kind"], saved["key"].cpu().numpy().astype(np.uint32), int(saved["pos"]),
                          int(saved["has_gauss"]), float(saved["gauss"]))
    return state


def set_rng_state(state: Mapping) -> None:
    """Restore what :func:`rng_state` saved."""
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"].cpu())  # a checkpoint loaded onto the GPU maps every tensor there
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all([s.cpu() for s in state["cuda"]])


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
        return {"main": make_optimizer(self.train_config.optimizer, self.model.parameters(),
                                       batch_size=self.train_config.batch_size)}

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


# ------------------------------------------------------------------ failures, schedule, checkpoints
class NonFiniteTraining(CellFailed):
    """A run whose ``what`` (``'loss'`` or ``'gradient'``) became non-finite in ``epoch`` (1-based)."""

    def __init__(self, message: str, epoch: int, what: str):
        super().__init__(message)
        self.epoch, self.what = epoch, what

    def __reduce__(self):  # pickled whole (a worker process returns it to the executor)
        return type(self), (str(self), self.epoch, self.what)


def failure(label: str, epoch: int, what: str) -> NonFiniteTraining:
    """The error of a run whose ``what`` (loss or gradient) became non-finite in ``epoch``."""
    return NonFiniteTraining(f"{label}: non-finite {what} in epoch {epoch}; training stopped", epoch, what)


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
                    generator: torch.Generator, rng: Mapping, history: list[dict], epoch: int, done: bool,
                    stopped: Mapping | None = None) -> None:
    """Write ``work_dir/checkpoint.pt`` (model, optimizers, RNG states, epoch, history) and ``metrics.csv``
    atomically; the ensemble writes each member's in the same format, so either trainer resumes either's.
    ``stopped``: why a run ended before its last epoch (:meth:`fyexp.train.Trainer.fit` with ``keep_last_finite``),
    kept so that a later ``fit`` of the finished run reports it too."""
    work_dir.mkdir(parents=True, exist_ok=True)
    state = {"epoch": epoch, "done": done, "model": task.model.state_dict(),
             "optimizers": {k: o.state_dict() for k, o in optimizers.items()},
             "rng": rng_to_data(rng), "shuffle_rng": generator.get_state(), "history": history,
             "extra": task.extra_state()}
    if stopped is not None:
        state["stopped"] = dict(stopped)
    buffer = io.BytesIO()
    torch.save(state, buffer)
    atomic_write_bytes(work_dir / CHECKPOINT, buffer.getvalue())
    columns = list(dict.fromkeys(k for row in history for k in row))
    lines = [",".join(columns)] + [",".join(_csv_value(row.get(c)) for c in columns) for row in history]
    atomic_write_text(work_dir / METRICS, "\n".join(lines) + "\n")


# the numpy globals a checkpoint written before rng_to_data needs (numpy's RNG state pickled as an ndarray)
LEGACY_NUMPY_GLOBALS = (np.ndarray, np.dtype, np.dtypes.UInt32DType, np._core.multiarray._reconstruct)
CHECKPOINT_KEYS = ("epoch", "done", "model", "optimizers", "rng", "shuffle_rng", "history", "extra")


def read_checkpoint(path: Path, device: str = "cpu", mmap: bool = False, consequence: str = "training starts "
                    "again from its first epoch") -> dict | None:
    """The checkpoint at ``path`` read as data (``torch.load(weights_only=True)``), or None, after one warning
    naming the file (:func:`fyexp.store.damaged.warn_damaged`), when it cannot be read that way: a pickled object the
    restricted reader refuses (a crafted file; nothing in it runs), a damaged file, or a value that is not a
    checkpoint of :func:`save_checkpoint` (a mapping with :data:`CHECKPOINT_KEYS`)."""
    from fyexp.store.damaged import warn_damaged

    try:
        with torch.serialization.safe_globals(list(LEGACY_NUMPY_GLOBALS)):
            state = torch.load(path, map_location=device, weights_only=True, mmap=mmap)
    except pickle.UnpicklingError as exc:
        refused = re.search(r"Unsupported global: GLOBAL (\S+)", str(exc))
        if refused is None:  # not a refusal: a damaged file
            warn_damaged(path, "damaged checkpoint", _first_line(exc), consequence)
        else:
            warn_damaged(path, "refused checkpoint", f"it holds the global {refused.group(1)}, not only tensors and "
                         "plain data: loading it could run code", consequence)
        return None
    except Exception as exc:  # noqa: BLE001 (truncated, not a zip archive, unreadable: torch raises many kinds)
        warn_damaged(path, "damaged checkpoint", _first_line(exc), consequence)
        return None
    if not isinstance(state, dict) or any(key not in state for key in CHECKPOINT_KEYS):
        found = sorted(map(str, state)) if isinstance(state, dict) else type(state).__name__
        warn_damaged(path, "damaged checkpoint", f"not a fyexp checkpoint: expected the keys "
                     f"{list(CHECKPOINT_KEYS)}, found {found}", consequence)
        return None
    return state


def _first_line(exc: Exception) -> str:
    """What went wrong, in one phrase: the restricted reader's own reason where torch wraps it in advice."""
    text = str(exc)
    reason = re.search(r"WeightsUnpickler error:\s*([^\n]+)", text)
    words = reason.group(1) if reason else text.strip().split("\n")[0].split(". ")[0]
    return f"{type(exc).__name__}: {words[:120]}" if words else type(exc).__name__


def training_finished(folder: Path) -> bool:
    """Whether every checkpoint under ``folder`` (``checkpoint.pt`` at any depth: a cell's own, its groups', its
    ensemble members') records a finished training (``done``); true when there is none.  A checkpoint that cannot
    be read as data counts as finished, after its warning (``run --force`` then discards it, as it discards every
    finished one)."""
    paths = sorted(Path(folder).rglob(CHECKPOINT)) if Path(folder).is_dir() else []
    for path in paths:
        state = read_checkpoint(path, mmap=True, consequence="`run --force` discards it")
        if state is not None and not bool(state["done"]):
            return False
    return True


def load_checkpoint(work_dir: Path | None, device: str, task: TrainTask,
                    optimizers: Mapping[str, torch.optim.Optimizer], generator: torch.Generator) -> dict | None:
    """Restore model, optimizers, shuffling generator and task state from ``work_dir/checkpoint.pt``; return the
    checkpoint (its ``rng`` as :func:`rng_state` gives it, ``history``, ``epoch``, ``done`` for the caller), or None
    when there is none or it cannot be read as data (:func:`read_checkpoint`: one warning, and the run starts
    afresh; the file is overwritten by the first epoch's checkpoint)."""
    path = work_dir / CHECKPOINT if work_dir is not None else None
    if path is None or not path.is_file():
        return None
    state = read_checkpoint(path, device)
    if state is None:
        return None
    task.model.load_state_dict(state["model"])
    for name, opt in optimizers.items():
        opt.load_state_dict(state["optimizers"][name])
    generator.set_state(state["shuffle_rng"].cpu())  # a CPU generator's state, wherever the load mapped it
    task.load_extra_state(state["extra"])
    state["rng"] = rng_from_data(state["rng"])
    return state


def _csv_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)
