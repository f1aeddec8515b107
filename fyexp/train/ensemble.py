"""Several runs of one architecture trained as one model with a leading ensemble dimension (M members).

PyTorch's model-ensembling recipe: the members' parameters are stacked (``torch.func.stack_module_state``,
each tensor (M, ...)), the task's loss runs once under ``vmap`` over (parameters, batch) with
``functional_call`` on the first member's module, and one optimizer of the members' class and settings steps the
stacked tensors.  Every member is its solo run, to float tolerance (``tests/train/test_ensemble.py``):

* **initialization** — each member's task is built by the caller exactly as its solo run builds it
  (``seed_everything(seed)`` then the model), and its global RNG state right after that is captured
  (:class:`EnsembleMember` ``.rng``);
* **data order** — each member has its solo run's shuffling generator (``torch.Generator().manual_seed(seed)``)
  and its own permutation per epoch; its batch is the same rows;
* **noise** — every random draw inside the loss (``torch.randn``, ``Tensor.normal_``, dropout, …) is made
  outside ``vmap`` once per member from that member's own generator state (:class:`MemberRandomness`), so
  member m draws the numbers its solo run draws, in the same order; a random op it does not know is refused
  by ``vmap(randomness="error")`` rather than silently shared;
* **optimizer state** — Adam(W), SGD and RMSprop are elementwise, so one optimizer over stacked tensors is
  M independent optimizers; weight decay is elementwise too, and the LR schedule is the config's, the same
  factor for every member (members must share the optimizer settings; the Trainer has no gradient clipping).
  The stacked loss is Σ_m loss_m, whose gradient with respect to member m's slice is ∇ loss_m.

Checkpoints, resume and the NaN guard are per member: member m's ``work_dir/checkpoint.pt`` is what its solo
:class:`~fyexp.train.Trainer` would write (either trainer resumes the other's); a member whose loss or gradient
becomes non-finite gets the solo run's :class:`~fyexp.core.errors.CellFailed` in its :class:`MemberResult` while
the others go on (its loss is masked out, its gradient zeroed and its parameters frozen).  Members resuming
from different epochs train as separate ensembles, one per start epoch.

Limits: the tensor data path only (a tensor or tuple of tensors of the same shapes for every member); buffers
are read, not updated, by the loss; a random draw must go through a torch function (``torch.distributions``'
Beta/Dirichlet/Gamma ``sample`` use an autograd.Function that ``vmap`` refuses; draw ``torch._sample_dirichlet``
directly instead, as :class:`~fyexp.distributions.BetaGaussian` does); python/numpy randomness inside a loss is
not per member; ``train.compile`` is not applied.

Private torch internals, and why no public API serves: stacking, the functional call and ``vmap`` are the public
``torch.func`` (``stack_module_state``, ``functional_call``, ``vmap``).  Per-member randomness is not: ``vmap``'s
``randomness`` is ``"error"``, ``"same"`` (one draw shared) or ``"different"`` (one (M, ...) draw from the one
global generator), none of which gives member m the numbers its solo run draws from its own generator state.  So
:class:`MemberRandomness` leaves the ``vmap`` level for each random call and draws member by member:
``torch._functorch.pyfunctorch.temporarily_pop_interpreter_stack`` (leave the level), and from
``torch._C._functorch`` ``maybe_current_level`` / ``is_batchedtensor`` / ``maybe_get_level`` /
``_unwrap_batched`` (a batched argument's M slices: ``torch.bernoulli(p)``, ``torch._standard_gamma(α)``,
dropout, whose draws depend on the values of their arguments, so they cannot be drawn from shapes alone) and
``_add_batch_dim`` (the M draws returned as one batched tensor).  ``tests/train/test_ensemble.py`` checks each member's
draws and training against its solo run's, so a torch release that changes these fails there, not silently.
"""

from __future__ import annotations

import dataclasses
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import torch
import torch.nn.functional as F
from torch import nn
from torch._functorch.pyfunctorch import temporarily_pop_interpreter_stack
from torch.func import functional_call, stack_module_state, vmap
from torch.overrides import TorchFunctionMode

from fyexp.core.errors import CellFailed, FyexpError
from fyexp.train._state import (TensorBatches, TrainConfig, TrainTask, apply_schedule, failure, load_checkpoint,
                                remember_initial_lr, rng_state, save_checkpoint, set_rng_state)

__all__ = ["EnsembleMember", "MemberResult", "MemberRandomness", "fit_ensemble"]

_functorch = torch._C._functorch

# Random torch functions drawn once per member; in-place ones fill their tensor (see MemberRandomness).
RANDOM_FUNCTIONS = {torch.randn, torch.rand, torch.randint, torch.randn_like, torch.rand_like, torch.randint_like,
                    torch.normal, torch.bernoulli, torch.poisson, torch.multinomial, torch.binomial,
                    torch._standard_gamma, torch._sample_dirichlet, torch.Tensor.bernoulli, torch.Tensor.multinomial,
                    F.dropout, torch.dropout}
IN_PLACE_RANDOM = {torch.Tensor.normal_, torch.Tensor.uniform_, torch.Tensor.bernoulli_, torch.Tensor.exponential_,
                   torch.Tensor.random_, torch.Tensor.cauchy_, torch.Tensor.log_normal_, torch.Tensor.geometric_}


def capture_rng() -> dict:
    """The global RNG states now (:func:`~fyexp.train.rng_state`, with CUDA's whenever CUDA is available)."""
    state = rng_state()
    if torch.cuda.is_available() and "cuda" not in state:
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


@dataclass
class EnsembleMember:
    """One run of the ensemble: its task (built as its solo run builds it), its training data, seed, work_dir
    and label.  ``rng`` defaults to the global RNG state at construction, so construct the member right after
    building its task — the state its solo run would start training from."""

    task: TrainTask
    data: Any
    seed: int
    work_dir: Path | str | None = None
    label: str = "member"
    rng: dict = field(default_factory=capture_rng)


@dataclass
class MemberResult:
    """A member's per-epoch history, its failure (None if it trained), and its final global RNG state."""

    label: str
    history: list[dict]
    error: CellFailed | None
    rng: dict

    def unwrap(self) -> list[dict]:
        """The history, or the member's :class:`CellFailed` raised."""
        if self.error is not None:
            raise self.error
        return self.history

    def restore_rng(self) -> None:
        """Set the global RNG to where the member's solo run leaves it, so what follows (evaluation) draws the same."""
        set_rng_state(self.rng)


# --------------------------------------------------------------------------------- per-member randomness
def _default_generators(device: str) -> list[torch.Generator]:
    device = torch.device(device)
    generators = [torch.default_generator]
    if device.type == "cuda":
        generators.append(torch.cuda.default_generators[device.index if device.index is not None
                                                        else torch.cuda.current_device()])
    return generators


class MemberRandomness(TorchFunctionMode):
    """Inside ``vmap`` over M members: every random torch function runs once per member, outside ``vmap``, from
    that member's generator states, and the M draws are stacked as the batched result.

    The member states are the global generators' (CPU, and the device's CUDA generator), swapped in and out
    around each draw; :meth:`member` does the same for code outside ``vmap`` (validation).  An in-place draw on
    a tensor that is not batched (``torch.empty(shape).normal_()``, as ``torch.distributions`` does) returns the
    batched draw and fills the unbatched tensor with NaN, so code that ignores the return value fails loudly.
    """

    def __init__(self, rngs: Sequence[dict], device: str):
        super().__init__()
        self.generators = _default_generators(device)
        self.states = [[self._initial(rng, g) for g in self.generators] for rng in rngs]

    @staticmethod
    def _initial(rng: dict, generator: torch.Generator) -> torch.Tensor:
        if generator is torch.default_generator:
            return rng["torch"].clone()
        index = torch.cuda.default_generators.index(generator)
        return rng["cuda"][index].clone() if "cuda" in rng else generator.get_state()

    def rng(self, m: int, base: dict) -> dict:
        """``base`` (a member's captured state) with the torch states replaced by member ``m``'s current ones."""
        out = dict(base)
        for g, state in zip(self.generators, self.states[m]):
            if g is torch.default_generator:
                out["torch"] = state.clone()
            else:
                cuda = list(out.get("cuda", torch.cuda.get_rng_state_all()))
                cuda[torch.cuda.default_generators.index(g)] = state.clone()
                out["cuda"] = cuda
        return out

    @contextmanager
    def member(self, m: int) -> Iterator[None]:
        """Run a block on member ``m``'s generator states (saved back afterwards)."""
        for g, state in zip(self.generators, self.states[m]):
            g.set_state(state)
        try:
            yield
        finally:
            self.states[m] = [g.get_state() for g in self.generators]

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        level = _functorch.maybe_current_level()
        if level is None or (func not in RANDOM_FUNCTIONS and func not in IN_PLACE_RANDOM):
            return func(*args, **kwargs)
        if func in (F.dropout, torch.dropout) and not (kwargs.get("training", args[2] if len(args) > 2 else True)):
            return func(*args, **kwargs)
        in_place = func in IN_PLACE_RANDOM
        target_batched = in_place and _functorch.is_batchedtensor(args[0])
        with temporarily_pop_interpreter_stack():
            flat = [_unwrap(a, level) for a in args]
            named = {k: _unwrap(v, level) for k, v in kwargs.items()}
            draws = []
            for m in range(len(self.states)):
                member_args = [_slice(a, m) for a in flat]
                member_kwargs = {k: _slice(v, m) for k, v in named.items()}
                if in_place and not target_batched:
                    member_args[0] = torch.empty_like(member_args[0])
                with self.member(m):
                    draws.append(func(*member_args, **member_kwargs))
            if in_place and target_batched:
                return args[0]  # the slices of the unwrapped tensor were filled in place
            out = torch.stack(draws)
            if in_place:
                args[0].fill_(float("nan"))
        return _functorch._add_batch_dim(out, 0, level)


class _Batched:
    """A tensor unwrapped from the current vmap level, its member dimension moved to the front."""

    def __init__(self, tensor: torch.Tensor):
        self.tensor = tensor


def _unwrap(value: Any, level: int) -> Any:
    if isinstance(value, torch.Tensor) and _functorch.is_batchedtensor(value) \
            and _functorch.maybe_get_level(value) == level:
        tensor, bdim = _functorch._unwrap_batched(value, level)
        return _Batched(tensor.movedim(bdim, 0))
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(v, level) for v in value)
    return value


def _slice(value: Any, m: int) -> Any:
    if isinstance(value, _Batched):
        return value.tensor[m]
    if isinstance(value, (list, tuple)):
        return type(value)(_slice(v, m) for v in value)
    return value


# ----------------------------------------------------------------------------------------- one member
@dataclass
class _Run:
    """A member's solo-run objects (task, optimizers, shuffling generator), restored from its checkpoint."""

    member: EnsembleMember
    optimizers: dict
    generator: torch.Generator
    batches: TensorBatches
    history: list[dict]
    rng: dict
    start_epoch: int
    done: bool
    error: CellFailed | None = None

    @classmethod
    def open(cls, member: EnsembleMember, config: TrainConfig, device: str, on_device: dict) -> "_Run":
        task = member.task
        task.model.to(device)
        task.train_config = dataclasses.replace(config, seed=member.seed)
        optimizers = task.configure_optimizers()
        task._optimizer_names = tuple(optimizers)
        remember_initial_lr(optimizers.values())
        generator = torch.Generator().manual_seed(member.seed)
        work_dir = Path(member.work_dir) if member.work_dir is not None else None
        member.work_dir = work_dir
        state = load_checkpoint(work_dir, device, task, optimizers, generator)
        data = member.data if isinstance(member.data, (tuple, list)) else (member.data,)
        if not all(isinstance(t, torch.Tensor) for t in data):
            raise FyexpError(f"{member.label}: an ensemble trains on tensors (the tensor fast path), "
                             f"got {type(member.data).__name__}")
        tensors = tuple(on_device.setdefault(id(t), t.to(device)) for t in data)
        batches = TensorBatches(tensors, config.batch_size, device, generator, drop_last=config.drop_last)
        if state is None:
            return cls(member, optimizers, generator, batches, [], dict(member.rng), 0, False)
        return cls(member, optimizers, generator, batches, list(state["history"]), dict(state["rng"]),
                   int(state["epoch"]), bool(state["done"]))

    def save(self, epoch: int, done: bool) -> None:
        if self.member.work_dir is not None:
            save_checkpoint(self.member.work_dir, self.member.task, self.optimizers, self.generator, self.rng,
                            self.history, epoch, done)


# ---------------------------------------------------------------------------------------- the ensemble
class _TaskLoss(nn.Module):
    """``forward(batch)`` = the task's loss, so that ``functional_call`` can swap in one member's parameters."""

    def __init__(self, task: TrainTask, device: str):
        super().__init__()
        self.model = task.model
        self.__dict__["task"], self.__dict__["device"] = task, device

    def forward(self, batch):
        loss, logs = self.task.loss(batch)
        return loss, {k: torch.as_tensor(v, device=self.device) for k, v in logs.items()}


_NOT_SETTINGS = {"train_config", "_optimizer_names", "_forward_hooks_with_kwargs", "_forward_hooks_always_called"}


def settings(obj: Any, depth: int = 0) -> Any:
    """The plain settings of ``obj`` and of everything it holds (attributes, modules, dataclasses), recursively:
    numbers, strings, types and function names as they are, tensors as (shape, dtype).  The loss of an ensemble
    is its first member's code with each member's parameters, so members must agree on all of these (an
    observation head's ρ′, an objective's β, a regularizer) — they differ in parameters, data and seed only."""
    if isinstance(obj, (bool, int, float, str, type(None))):
        return obj
    if isinstance(obj, torch.Tensor):
        return ("tensor", tuple(obj.shape), obj.dtype)
    if isinstance(obj, type) or callable(obj) and not hasattr(obj, "__dict__") or depth > 12:
        return getattr(obj, "__qualname__", type(obj).__qualname__)
    if isinstance(obj, (list, tuple)):
        return tuple(settings(v, depth + 1) for v in obj)
    if isinstance(obj, dict):
        return tuple((str(k), settings(v, depth + 1)) for k, v in obj.items() if k not in _NOT_SETTINGS)
    if hasattr(obj, "__dict__") and not callable(getattr(obj, "__func__", None)):
        if isinstance(obj, type(settings)):   # a plain function
            return obj.__qualname__
        return type(obj).__qualname__, settings(vars(obj), depth + 1)
    return type(obj).__qualname__


def _check_same_architecture(runs: Sequence[_Run]) -> None:
    first = runs[0]

    def signature(run: _Run):
        groups = {name: [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups]
                  for name, opt in run.optimizers.items()}
        return settings(run.member.task), {k: type(o) for k, o in run.optimizers.items()}, groups

    for run in runs[1:]:
        if signature(run) != signature(first):
            raise FyexpError(f"{run.member.label}: an ensemble needs members of one task, architecture and "
                             f"settings (they differ in parameters, data and seed only); it differs from "
                             f"{first.member.label}")


def _stacked_optimizer(runs: Sequence[_Run], name: str, params: dict[str, torch.Tensor]) -> torch.optim.Optimizer:
    """The first member's optimizer ``name`` over the stacked tensors, with the members' states stacked."""
    template = runs[0].optimizers[name]
    names = {id(p): n for n, p in runs[0].member.task.model.named_parameters()}
    groups = [{**{k: v for k, v in g.items() if k != "params"}, "params": [params[names[id(p)]] for p in g["params"]]}
              for g in template.param_groups]
    stacked = type(template)(groups)
    states = [run.optimizers[name].state_dict() for run in runs]
    if states[0]["state"]:
        state = {index: {key: torch.stack([s["state"][index][key] for s in states])
                         if isinstance(value, torch.Tensor) and value.dim() > 0 else value
                         for key, value in entry.items()} for index, entry in states[0]["state"].items()}
        stacked.load_state_dict({"state": state, "param_groups": states[0]["param_groups"]})
    return stacked


def _unstack_optimizer(stacked: torch.optim.Optimizer, m: int, target: torch.optim.Optimizer) -> None:
    state = stacked.state_dict()
    member = {index: {key: value[m] if isinstance(value, torch.Tensor) and value.dim() > 0 else value
                      for key, value in entry.items()} for index, entry in state["state"].items()}
    target.load_state_dict({"state": member, "param_groups": state["param_groups"]})


def fit_ensemble(config: TrainConfig, members: Sequence[EnsembleMember], *, device: str = "cpu",
                 subtask: Callable[[str, float | None], Callable[..., None]] | None = None,
                 label: str = "ensemble") -> list[MemberResult]:
    """Train ``members`` as one model (or return at once those already finished); one result per member, in order.

    ``config`` is shared (its ``seed`` is replaced by each member's).  A member's failure is in its result's
    ``error``; exceptions from task hooks (e.g. a pruned trial) propagate.  The global RNG state afterwards is
    none of the members'; :meth:`MemberResult.restore_rng` sets the one member m's solo run would leave.
    """
    if not members:
        raise FyexpError(f"{label}: an ensemble needs at least one member")
    on_device: dict[int, torch.Tensor] = {}
    runs = [_Run.open(member, config, device, on_device) for member in members]
    by_start: dict[int, list[_Run]] = {}
    for run in runs:
        if not run.done:
            by_start.setdefault(run.start_epoch, []).append(run)
    for start, group in sorted(by_start.items()):
        _check_same_architecture(group)
        _train(config, group, start, device, subtask, label)
    return [MemberResult(run.member.label, run.history, run.error, run.rng) for run in runs]


@contextmanager
def _vmap_errors(label: str) -> Iterator[None]:
    """The two ways a loss cannot run under ``vmap``, as one-line errors."""
    try:
        yield
    except RuntimeError as exc:
        if "autograd.Function" in str(exc):
            raise FyexpError(f"{label}: the loss calls an autograd.Function without a vmap rule (torch.distributions' "
                             f"Beta/Dirichlet/Gamma sample is one), so these runs cannot train as an ensemble; "
                             f"use train.ensemble: false") from exc
        if "randomness" in str(exc):
            raise FyexpError(f"{label}: the loss draws with a random op the ensemble does not split per member "
                             f"(fyexp.train.ensemble.RANDOM_FUNCTIONS); use train.ensemble: false") from exc
        raise


def _gather(runs: Sequence[_Run], indices: Sequence[torch.Tensor]) -> tuple[torch.Tensor, ...]:
    """The members' batches stacked, (M, B, ...): one gather when the members share their data tensors."""
    tensors = runs[0].batches.tensors
    if all(run.batches.tensors is tensors or all(a is b for a, b in zip(run.batches.tensors, tensors))
           for run in runs):
        index = torch.stack(list(indices))
        return tuple(t[index] for t in tensors)
    return tuple(torch.stack([run.batches.tensors[j][i] for run, i in zip(runs, indices)])
                 for j in range(len(tensors)))


def _train(config: TrainConfig, runs: list[_Run], start_epoch: int, device: str,
           subtask: Callable | None, label: str) -> None:
    cfg, size = config, len(runs)
    template = runs[0].member.task
    params, buffers = stack_module_state([run.member.task.model for run in runs])
    optimizers = {name: _stacked_optimizer(runs, name, params) for name in runs[0].optimizers}
    loss_module = _TaskLoss(template, device)
    prefixed = ({f"model.{k}": v for k, v in params.items()}, {f"model.{k}": v for k, v in buffers.items()})

    def member_loss(member_params, member_buffers, batch):
        return functional_call(loss_module, (member_params, member_buffers), (batch,))

    batched_loss = vmap(member_loss, in_dims=(0, 0, 0), randomness="error")
    randomness = MemberRandomness([run.rng for run in runs], device)
    autocast = torch.autocast("cuda", dtype=torch.bfloat16, enabled=cfg.amp and device.startswith("cuda"))
    stacked = [p for p in params.values() if p.requires_grad]
    alive = [True] * size
    frozen: dict[int, list[torch.Tensor]] = {}
    steps = len(runs[0].batches)
    advance = subtask(f"{label} ×{size}", (cfg.epochs - start_epoch) * steps) if subtask else None
    if advance is not None:
        advance(0, info="")

    def stop(m: int) -> None:
        alive[m] = False
        frozen[m] = [p[m].detach().clone() for p in stacked]

    for epoch in range(start_epoch + 1, cfg.epochs + 1):
        if not any(alive):
            break
        apply_schedule(optimizers.values(), cfg.schedule.factor(epoch))
        for m, run in enumerate(runs):
            if alive[m]:
                run.member.task.on_epoch_start(epoch)
        active = [optimizers[name] for name in template.optimizers_for_epoch(epoch)]
        template.model.train()
        mask = torch.tensor(alive, device=device)
        sums: dict[str, torch.Tensor] = {}
        bad_loss = torch.zeros(size, dtype=torch.bool, device=device)
        bad_grad = torch.zeros(size, dtype=torch.bool, device=device)
        seen, since_log, tic = 0, 0, time.perf_counter()
        for step, indices in enumerate(zip(*(run.batches.batch_indices() for run in runs)), 1):
            batch = _gather(runs, indices)
            n = len(indices[0])
            with autocast, randomness, _vmap_errors(label):
                losses, logs = batched_loss(*prefixed, batch)
            for opt in optimizers.values():
                opt.zero_grad(set_to_none=True)
            torch.where(mask, losses, torch.zeros_like(losses)).sum().backward()
            bad_loss |= ~torch.isfinite(losses.detach())
            grads = [p.grad for p in stacked if p.grad is not None]
            if cfg.check_grads and grads:
                norms = torch.stack([g.reshape(size, -1).norm(dim=1) for g in grads]).sum(0)
                bad_grad |= ~torch.isfinite(norms)
            if frozen:
                for g in grads:
                    g[list(frozen)] = 0.0
            for opt in active:
                opt.step()
            if frozen:
                with torch.no_grad():
                    for m, values in frozen.items():
                        for p, value in zip(stacked, values):
                            p[m].copy_(value)
            for key, value in {"loss": losses, **logs}.items():
                value = value.detach().float() * n
                sums[key] = sums[key] + value if key in sums else value
            seen += n
            since_log += 1
            if step % cfg.log_every == 0 or step == steps:
                bad = (bad_loss | bad_grad).tolist()
                for m in range(size):
                    if alive[m] and bad[m]:
                        what = "loss" if bool(bad_loss[m]) else "gradient"
                        runs[m].error = failure(runs[m].member.label, epoch, what)
                        stop(m)
                mask = torch.tensor(alive, device=device)
                if advance is not None:
                    rate = seen * sum(alive) / max(time.perf_counter() - tic, 1e-9)
                    mean = float(sums["loss"][mask].mean()) / seen if any(alive) else float("nan")
                    advance(since_log, info=f"epoch {epoch}/{cfg.epochs} loss {mean:.4g} {rate:,.0f} ex/s")
                since_log = 0
        elapsed = time.perf_counter() - tic
        lr = next(iter(optimizers.values())).param_groups[0]["lr"]
        totals = {key: value.tolist() for key, value in sums.items()}
        for m, run in enumerate(runs):
            if not alive[m]:
                continue
            row = {"epoch": epoch, "lr": lr, "train_loss": totals["loss"][m] / seen}
            row.update({f"train_{k}": v[m] / seen for k, v in totals.items() if k != "loss"})
            row.update({"examples_per_s": seen / elapsed, "epoch_time_s": elapsed})
            task = run.member.task
            with torch.no_grad():
                for name, p in task.model.named_parameters():
                    p.copy_(params[name][m])
            task.model.eval()
            with torch.no_grad(), randomness.member(m):
                row.update({k: float(v) for k, v in task.validate(epoch).items()})
            run.history.append(row)
            run.rng = randomness.rng(m, run.rng)
            if run.member.work_dir is not None:
                for name, opt in optimizers.items():
                    _unstack_optimizer(opt, m, run.optimizers[name])
            run.save(epoch, done=epoch == cfg.epochs)
            if task.on_epoch_end(epoch, row):
                run.save(epoch, done=True)
                stop(m)
