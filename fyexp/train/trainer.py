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
* a guard that stops on a NaN/inf loss or gradient with :class:`fyexp.core.errors.CellFailed` naming the run
  and the epoch, checked every ``log_every`` steps with one synchronisation and nothing per step: the loss on the
  epoch's running loss sum, a gradient on the parameters it reached (:meth:`Trainer._guard`).
  With ``keep_last_finite=True`` (a protocol choice of the runner, not a setting) a run that diverges after its
  first epoch ends instead at the checkpoint of its last finished epoch, marked finished, and says so in
  :attr:`Trainer.stopped` (:meth:`Trainer._keep_last_finite`).

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

import os
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import torch
from torch.utils.data import DataLoader, Dataset

from fyexp.train._state import (CHECKPOINT, METRICS, NonFiniteTraining, TensorBatches, TrainConfig, TrainTask,
                                apply_schedule, failure, load_checkpoint, remember_initial_lr, rng_state,
                                save_checkpoint, seed_everything, set_rng_state)

__all__ = ["TrainConfig", "TrainTask", "Trainer", "seed_everything", "rng_state", "set_rng_state",
           "TensorBatches", "CHECKPOINT", "METRICS"]


# ------------------------------------------------------------------------------------------ the loop
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


class EpochSums:
    """Σ_batches n_b · v_b of the loss and of each logged value over an epoch, kept on the device.

    Per step, the loss and the logged values (0-dim tensors, the usual case) are stacked into one vector and
    added: three small operations whatever their number, no host synchronisation.  Each entry is the float32
    sequence ``s ← s + float32(v)·n`` of the per-name sums it replaces, element for element, so the epoch means are
    bit for bit the same.  Values that are not 0-dim tensors, or names that change between steps, fall back to one
    sum per name.
    """

    def __init__(self, n_steps: int | None = None):
        self.keys: tuple[str, ...] | None = None
        self.vector: torch.Tensor | None = None
        self.by_name: dict[str, torch.Tensor] | None = None

    def add(self, loss: torch.Tensor, logs: Mapping[str, Any], n: int) -> None:
        values = (loss, *logs.values())
        if self.by_name is None and (self.keys is None or self.keys == ("loss", *logs)) \
                and all(isinstance(v, torch.Tensor) and v.dim() == 0 for v in values):
            if self.keys is None:
                self.keys = ("loss", *logs)
            step = torch.stack([v.detach().float() for v in values]) * n
            self.vector = step if self.vector is None else self.vector + step
            return
        if self.by_name is None:
            self.by_name = dict(zip(self.keys, self.vector.unbind())) if self.vector is not None else {}
        device = loss.device
        for key, value in {"loss": loss, **logs}.items():
            value = torch.as_tensor(value, device=device).detach().float() * n
            self.by_name[key] = self.by_name[key] + value if key in self.by_name else value

    def loss_tensor(self) -> torch.Tensor:
        """Σ n · loss so far (on the device)."""
        return self.by_name["loss"] if self.by_name is not None else self.vector[0]

    def loss(self) -> float:
        return float(self.loss_tensor())

    def totals(self) -> dict[str, float]:
        """Every sum as a float, by name (``loss`` first)."""
        if self.by_name is not None:
            return {k: float(v) for k, v in self.by_name.items()}
        return dict(zip(self.keys, self.vector.tolist()))


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
    keep_last_finite : bool
        On a non-finite loss or gradient after the first epoch, end at the last finished epoch's checkpoint instead
        of failing (needs ``work_dir``; :meth:`_keep_last_finite`).  Off by default: a divergence fails the cell.

    Attributes
    ----------
    stopped : dict or None
        Set when a run ended at its last finite epoch: ``{"epoch": the epoch that diverged, "what": "loss" or
        "gradient", "kept_epoch": the epoch whose model was kept}``; read back from the checkpoint by a later fit.
    """

    def __init__(self, config: TrainConfig, *, device: str = "cpu", work_dir: Path | str | None = None,
                 subtask: Callable[[str, float | None], Callable[..., None]] | None = None, label: str = "training",
                 keep_last_finite: bool = False):
        self.config, self.device, self.label = config, device, label
        self.work_dir = Path(work_dir) if work_dir is not None else None
        self.subtask = subtask
        self.keep_last_finite = keep_last_finite
        self.history: list[dict] = []
        self.stopped: dict | None = None

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
        self.stopped = dict(state["stopped"]) if state.get("stopped") else None
        return int(state["epoch"]), bool(state["done"])

    # ----------------------------------------------------------------------------------------- guard
    def _fail(self, epoch: int, what: str) -> None:
        raise failure(self.label, epoch, what)

    def _keep_last_finite(self, task: TrainTask, optimizers: dict, generator: torch.Generator,
                          diverged: NonFiniteTraining) -> None:
        """End a diverged run at its last finite epoch, or re-raise ``diverged``.

        The model, optimizers and every RNG are restored from ``work_dir/checkpoint.pt``, written at the end of the
        last epoch whose loss and gradients were all finite, and saved back marked finished with the reason
        (:attr:`stopped`), so that a later fit returns the same model, history and RNG state at once.  Re-raised
        without ``keep_last_finite``, without a work_dir, or when no epoch finished (nothing to keep).

        Why a runner may ask for it: a script that saves its best model on a validation metric and tests the saved
        one keeps the last model before a divergence (a NaN validation loss never beats the best), where our runs
        stop; ``fy_vae`` follows the authors' ``mvb.py`` this way (see its docstring).
        """
        if not self.keep_last_finite or self.work_dir is None:
            raise diverged
        state = load_checkpoint(self.work_dir, self.device, task, optimizers, generator)
        if state is None:
            raise diverged
        set_rng_state(state["rng"])
        self.history = list(state["history"])
        self.stopped = {"epoch": diverged.epoch, "what": diverged.what, "kept_epoch": int(state["epoch"])}
        save_checkpoint(self.work_dir, task, optimizers, generator, state["rng"], self.history, int(state["epoch"]),
                        True, stopped=self.stopped)

    def _guard(self, epoch: int, sums: "EpochSums", params: Sequence[torch.Tensor]) -> None:
        """Stop on a non-finite loss or gradient since the epoch began (one host synchronisation).

        The loss: the epoch's running sum Σ n·loss is non-finite iff some batch's loss was (inf and NaN are
        absorbing under addition).  A gradient: every optimizer fyexp builds turns a non-finite gradient into a
        non-finite parameter at its step (Adam/AdamW/RMSprop: inf/inf or NaN in the update; SGD: p − lr·g), and a
        non-finite parameter stays so, so the parameters that received a gradient are checked instead of every
        gradient of every step — a norm over the parameters every ``log_every`` steps, not one per step.
        """
        checks = [sums.loss_tensor()]
        live = [p for p in params if p.grad is not None]
        if live:
            checks.append(torch.stack(torch._foreach_norm(live)).sum().to(checks[0].dtype))
        bad = (~torch.isfinite(torch.stack(checks))).tolist()
        if bad[0]:
            self._fail(epoch, "loss")
        if len(bad) > 1 and bad[1]:
            self._fail(epoch, "gradient")

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

        try:
            for epoch in range(start_epoch + 1, cfg.epochs + 1):
                task.model.train()
                apply_schedule(optimizers.values(), cfg.schedule.factor(epoch))
                task.on_epoch_start(epoch)
                active = [optimizers[name] for name in task.optimizers_for_epoch(epoch)]
                sums = EpochSums(n_steps=steps)
                seen, since_log, tic = 0, 0, time.perf_counter()
                for step, batch in enumerate(batches, 1):
                    batch = _to_device(batch, self.device)
                    n = _batch_size(batch)
                    with autocast:
                        loss, logs = loss_fn(batch)
                    for opt in optimizers.values():
                        opt.zero_grad(set_to_none=True)
                    loss.backward()
                    for opt in active:
                        opt.step()
                    sums.add(loss, logs, n)
                    seen += n
                    since_log += 1
                    if step % cfg.log_every == 0 or step == steps:
                        self._guard(epoch, sums, params if cfg.check_grads else ())
                        if advance is not None:
                            rate = seen / max(time.perf_counter() - tic, 1e-9)
                            advance(since_log, info=f"epoch {epoch}/{cfg.epochs} loss {sums.loss() / seen:.4g} "
                                                   f"{rate:,.0f} ex/s")
                        since_log = 0
                elapsed = time.perf_counter() - tic
                totals = sums.totals()
                row = {"epoch": epoch, "lr": next(iter(optimizers.values())).param_groups[0]["lr"],
                       "train_loss": totals.pop("loss") / seen}
                row.update({f"train_{k}": v / seen for k, v in totals.items()})
                row.update({"examples_per_s": seen / elapsed, "epoch_time_s": elapsed})
                task.model.eval()
                with torch.no_grad():
                    row.update({k: float(v) for k, v in task.validate(epoch).items()})
                self.history.append(row)
                self._save(task, optimizers, generator, epoch, done=epoch == cfg.epochs)
                if task.on_epoch_end(epoch, row):
                    self._save(task, optimizers, generator, epoch, done=True)
                    break
        except NonFiniteTraining as diverged:
            self._keep_last_finite(task, optimizers, generator, diverged)
        return self.history

    def fit_ensemble(self, members: Sequence[Any]) -> list:
        """Train ``members`` (:class:`fyexp.train.ensemble.EnsembleMember`, e.g. the seeds of a cell) as one
        model with a leading ensemble dimension; one :class:`~fyexp.train.ensemble.MemberResult` per member.

        Each member equals its solo :meth:`fit` (same seed, work_dir) to float tolerance and writes the same
        checkpoint; ``self.work_dir`` is not used (each member has its own), ``self.label`` names the progress bar.
        """
        from fyexp.train.ensemble import fit_ensemble
        return fit_ensemble(self.config, members, device=self.device, subtask=self.subtask, label=self.label)
