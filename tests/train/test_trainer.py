"""The trainer: determinism, resume after an interruption, NaN guard, alternating optimizers, stopping."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.utils.data import TensorDataset

from fyexp.core.errors import CellFailed
from fyexp.models import ModelConfig, build_vae
from fyexp.objectives import IWAE
from fyexp.train import (OptimizerConfig, ScheduleConfig, TrainConfig, Trainer, TrainTask, VariationalTask,
                         learning_rates, make_optimizer, seed_everything)


class NoisyRegression(TrainTask):
    """A two-layer net with dropout, so the global RNG matters as well as the shuffling."""

    def __init__(self, alternate: bool = False, nan_at_epoch: int | None = None):
        self.model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.2), nn.Tanh(), nn.Linear(8, 1))
        self.alternate, self.nan_at_epoch, self.epoch = alternate, nan_at_epoch, 0
        self.stepped: list[tuple[str, ...]] = []

    def configure_optimizers(self):
        first, second = self.model[0], self.model[3]
        return {"first": torch.optim.Adam(first.parameters(), lr=1e-2),
                "second": torch.optim.Adam(second.parameters(), lr=1e-2)}

    def optimizers_for_epoch(self, epoch):
        names = (("first",) if epoch % 2 else ("second",)) if self.alternate else ("first", "second")
        self.stepped.append(names)
        return names

    def on_epoch_start(self, epoch):
        self.epoch = epoch

    def loss(self, batch):
        x, y = batch
        mse = (self.model(x).squeeze(-1) - y).pow(2).mean()
        if self.nan_at_epoch is not None and self.epoch >= self.nan_at_epoch:
            mse = mse * float("nan")
        return mse, {"mse": mse}

    def validate(self, epoch):
        return {"weight_norm": float(self.model[0].weight.norm())}


def _data(n: int = 96):
    g = torch.Generator().manual_seed(123)
    x = torch.randn(n, 4, generator=g)
    return x, x @ torch.tensor([1.0, -2.0, 0.5, 0.0]) + 0.1 * torch.randn(n, generator=g)


def _train(epochs: int, work_dir=None, task_cls=NoisyRegression, data=None, **cfg):
    seed_everything(7)   # before the model is built, as an experiment does
    task = task_cls()
    cfg = {"log_every": 2, **cfg}
    trainer = Trainer(TrainConfig(epochs=epochs, batch_size=16, seed=7, **cfg), work_dir=work_dir,
                      label="test/cell")
    return trainer.fit(task, data if data is not None else _data()), task


def _losses(history):
    return [row["train_loss"] for row in history]


@pytest.mark.slow
def test_same_seed_gives_bitwise_identical_losses():
    first, _ = _train(3)
    second, _ = _train(3)
    assert _losses(first) == _losses(second)
    assert first[-1]["weight_norm"] == second[-1]["weight_norm"]
    assert _losses(first)[-1] < _losses(first)[0]


def test_tensor_fast_path_and_dataloader_see_the_same_batches_shapes():
    history, _ = _train(2, data=TensorDataset(*_data()))
    assert len(history) == 2 and all(torch.isfinite(torch.tensor(_losses(history))))


def test_resume_after_interrupt_equals_uninterrupted_run(tmp_path):
    full, full_task = _train(4)

    class Interrupt(Exception):
        pass

    class Interrupted(NoisyRegression):
        def on_epoch_end(self, epoch, metrics):
            if epoch == 2:
                raise Interrupt  # like Ctrl-C after the checkpoint of epoch 2
            return False

    with pytest.raises(Interrupt):
        _train(4, work_dir=tmp_path, task_cls=Interrupted)
    assert (tmp_path / "checkpoint.pt").is_file() and (tmp_path / "metrics.csv").is_file()
    resumed, resumed_task = _train(4, work_dir=tmp_path)   # a fresh process would re-seed and rebuild the same
    assert _losses(resumed) == _losses(full)
    for a, b in zip(full_task.model.state_dict().values(), resumed_task.model.state_dict().values()):
        assert torch.equal(a, b)
    lines = (tmp_path / "metrics.csv").read_text().strip().splitlines()
    assert len(lines) == 1 + 4 and lines[0].startswith("epoch,lr,train_loss")


def test_finished_run_is_not_retrained(tmp_path):
    history, _ = _train(2, work_dir=tmp_path)

    class MustNotTrain(NoisyRegression):
        def loss(self, batch):
            raise AssertionError("a finished run was retrained")

    again, _ = _train(2, work_dir=tmp_path, task_cls=MustNotTrain)
    assert _losses(again) == _losses(history)


def test_nan_loss_fails_the_cell_naming_run_and_epoch():
    with pytest.raises(CellFailed, match=r"test/cell: non-finite loss in epoch 2"):
        _train(3, task_cls=lambda: NoisyRegression(nan_at_epoch=2))


def test_nan_gradient_is_caught():
    class InfGradient(NoisyRegression):
        def loss(self, batch):
            x, y = batch
            out = self.model(x).squeeze(-1)
            bad = torch.sqrt(out * 0.0)   # finite value 0, infinite derivative at 0
            return (out - y).pow(2).mean() + bad.mean(), {}

    with pytest.raises(CellFailed, match=r"non-finite gradient in epoch 1"):
        _train(1, task_cls=InfGradient, log_every=1)


class OneBadStep(NoisyRegression):
    """Finite everywhere except at training step ``at`` (1-based): a NaN loss value with finite gradients
    (``what='loss'``), or a finite loss value with an infinite gradient (``what='gradient'``)."""

    def __init__(self, what: str, at: int):
        super().__init__()
        self.what, self.at, self.steps = what, at, 0

    def loss(self, batch):
        self.steps += 1
        x, y = batch
        out = self.model(x).squeeze(-1)
        mse = (out - y).pow(2).mean()
        if self.steps == self.at and self.what == "loss":
            mse = mse + torch.tensor(float("nan"))     # the value only: no gradient flows through the NaN
        if self.steps == self.at and self.what == "gradient":
            mse = mse + torch.sqrt(out * 0.0).mean()   # value 0, derivative +inf
        return mse, {"mse": mse.detach()}


@pytest.mark.parametrize("what", ["loss", "gradient"])
def test_a_single_bad_step_between_checks_fails_its_epoch(what):
    """96 points, batch 16: 6 steps an epoch, checked at the epoch's end only (log_every 50).  A NaN loss value at
    the 2nd step of epoch 2 (step 8), every later loss finite; an infinite gradient at the last step of epoch 2
    (step 12, so that no later loss of the epoch is NaN): the guard fails epoch 2, naming what went wrong."""
    with pytest.raises(CellFailed, match=rf"test/cell: non-finite {what} in epoch 2"):
        _train(3, task_cls=lambda: OneBadStep(what, at=8 if what == "loss" else 12), log_every=50)


def test_a_bad_step_in_a_later_epoch_lets_the_earlier_epochs_finish(tmp_path):
    with pytest.raises(CellFailed, match=r"in epoch 3"):
        _train(3, work_dir=tmp_path, task_cls=lambda: OneBadStep("gradient", at=13), log_every=50)
    assert len((tmp_path / "metrics.csv").read_text().strip().splitlines()) == 1 + 2


def test_without_check_grads_an_infinite_gradient_passes_the_gradient_check():
    """check_grads: false turns the gradient check off: the run of the test above then fails one epoch later, on
    its loss (the NaN parameters make every later loss NaN)."""
    with pytest.raises(CellFailed, match=r"non-finite loss in epoch 3"):
        _train(3, task_cls=lambda: OneBadStep("gradient", at=12), log_every=50, check_grads=False)


def _train_keeping(epochs: int, work_dir, task_cls, **cfg):
    """As :func:`_train`, with ``keep_last_finite``: returns the history, the task and the trainer."""
    seed_everything(7)
    task = task_cls()
    trainer = Trainer(TrainConfig(epochs=epochs, batch_size=16, seed=7, **{"log_every": 2, **cfg}),
                      work_dir=work_dir, label="test/cell", keep_last_finite=True)
    return trainer.fit(task, _data()), task, trainer


def _state(model):
    return {k: v.clone() for k, v in model.state_dict().items()}


def test_keep_last_finite_ends_a_diverged_run_at_its_last_finished_epoch(tmp_path):
    """NaN from epoch 3 on: the run keeps the model, history and RNG state of the end of epoch 2 — those of a run of
    2 epochs — marks its checkpoint finished, and says why; a later fit returns the same at once."""
    history, task, trainer = _train_keeping(5, tmp_path / "a", lambda: NoisyRegression(nan_at_epoch=3))
    draw = torch.rand(3)
    reference, reference_task = _train(2, work_dir=tmp_path / "b")
    assert torch.equal(draw, torch.rand(3))   # the RNG is the end of epoch 2's, as a finished 2-epoch run leaves it
    assert _losses(history) == _losses(reference) and len(history) == 2
    assert trainer.stopped == {"epoch": 3, "what": "loss", "kept_epoch": 2}
    expected = _state(reference_task.model)
    assert all(torch.equal(v, expected[k]) for k, v in _state(task.model).items())

    class MustNotTrain(NoisyRegression):
        def loss(self, batch):
            raise AssertionError("a run kept at its last finite epoch was trained again")

    again, again_task, again_trainer = _train_keeping(5, tmp_path / "a", MustNotTrain)
    assert _losses(again) == _losses(history) and again_trainer.stopped == trainer.stopped
    assert all(torch.equal(v, expected[k]) for k, v in _state(again_task.model).items())
    assert len((tmp_path / "a" / "metrics.csv").read_text().strip().splitlines()) == 1 + 2


def test_keep_last_finite_names_a_diverged_gradient(tmp_path):
    """An infinite gradient at step 18 (the last of epoch 3, 6 steps an epoch, so no loss of the epoch is NaN):
    kept at epoch 2, the gradient named."""
    history, _, trainer = _train_keeping(4, tmp_path, lambda: OneBadStep("gradient", at=18), log_every=50)
    assert trainer.stopped == {"epoch": 3, "what": "gradient", "kept_epoch": 2} and len(history) == 2


def test_keep_last_finite_still_fails_without_a_finished_epoch_or_a_work_dir(tmp_path):
    with pytest.raises(CellFailed, match=r"non-finite loss in epoch 1"):
        _train_keeping(3, tmp_path, lambda: NoisyRegression(nan_at_epoch=1))
    with pytest.raises(CellFailed, match=r"non-finite loss in epoch 2"):
        _train_keeping(3, None, lambda: NoisyRegression(nan_at_epoch=2))


def test_by_default_a_diverged_run_fails_and_its_checkpoint_stays_unfinished(tmp_path):
    from fyexp.train._state import training_finished

    with pytest.raises(CellFailed, match=r"in epoch 3"):
        _train(5, work_dir=tmp_path, task_cls=lambda: NoisyRegression(nan_at_epoch=3))
    assert not training_finished(tmp_path)


def test_a_divergence_error_survives_pickling():
    """A worker process sends the error back to the executor pickled."""
    import pickle

    from fyexp.train._state import failure

    error = pickle.loads(pickle.dumps(failure("test/cell", 4, "gradient")))
    assert isinstance(error, CellFailed) and (error.epoch, error.what) == (4, "gradient")
    assert str(error) == "test/cell: non-finite gradient in epoch 4; training stopped"


def _reference_sums(steps):
    """The per-name sums as the trainer computed them before EpochSums: s ← s + float32(v) · n, name by name."""
    sums = {}
    for loss, logs, n in steps:
        for key, value in {"loss": loss, **logs}.items():
            value = torch.as_tensor(value).detach().float() * n
            sums[key] = sums[key] + value if key in sums else value
    return {k: float(v) for k, v in sums.items()}


@pytest.mark.parametrize("kind", ["tensors", "floats and float64", "names change"])
def test_epoch_sums_equal_the_per_name_sums_bit_for_bit(kind):
    from fyexp.train.trainer import EpochSums

    g = torch.Generator().manual_seed(3)
    steps = []
    for i in range(200):
        loss, a, b = (torch.randn((), generator=g) * 10 ** float(torch.randint(-3, 4, (), generator=g))
                      for _ in range(3))
        logs = {"a": a, "b": b}
        if kind == "floats and float64":
            logs = {"a": float(a) / 3.0, "b": b.double() / 3.0}
        if kind == "names change" and i >= 150:
            logs = {"a": a, "c": b}
        steps.append((loss, logs, int(torch.randint(1, 65, (), generator=g))))
    sums = EpochSums()
    for loss, logs, n in steps:
        sums.add(loss, logs, n)
    expected = _reference_sums(steps)
    assert sums.totals() == expected and list(sums.totals()) == list(expected)
    assert sums.loss() == expected["loss"]


def test_alternating_optimizers_step_only_their_parameters():
    seed_everything(0)
    task = NoisyRegression(alternate=True)
    before = [p.detach().clone() for p in task.model.parameters()]
    Trainer(TrainConfig(epochs=1, batch_size=16)).fit(task, _data())
    after = list(task.model.parameters())
    first_changed = not torch.equal(before[0], after[0].detach())
    second_changed = not torch.equal(before[2], after[2].detach())
    assert first_changed and not second_changed and task.stepped == [("first",)]


def test_epoch_end_callback_can_stop_and_exceptions_propagate():
    class StopAfterTwo(NoisyRegression):
        def on_epoch_end(self, epoch, metrics):
            return epoch == 2

    history, _ = _train(5, task_cls=StopAfterTwo)
    assert [row["epoch"] for row in history] == [1, 2]

    class Pruned(Exception):
        pass

    class Prune(NoisyRegression):
        def on_epoch_end(self, epoch, metrics):
            raise Pruned

    with pytest.raises(Pruned):
        _train(2, task_cls=Prune)


# ------------------------------------------------------------------------------------------ schedules
def test_iwae_schedule_learning_rates_per_epoch():
    schedule = ScheduleConfig(name="iwae")
    rates = learning_rates(schedule, 1e-3, 3280 + 5)
    assert schedule.iwae_epochs == 3280
    starts = [1 + sum(3 ** j for j in range(i - 1)) for i in range(1, 9)]  # 1, 2, 5, 14, 41, 122, 365, 1094
    assert starts == [1, 2, 5, 14, 41, 122, 365, 1094]
    for i, start in enumerate(starts, 1):
        end = start + 3 ** (i - 1) - 1
        assert rates[start - 1] == pytest.approx(1e-3 * 10 ** (-(i - 1) / 7), rel=1e-12)
        assert len(set(rates[start - 1:end])) == 1  # constant within the stage
    assert rates[3279] == rates[-1] == pytest.approx(1e-4)  # stage 8: 1e-3 · 10^-1, kept afterwards
    rounded = learning_rates(ScheduleConfig(name="iwae", rounded=True), 1e-3, 3280)
    assert [rounded[s - 1] for s in starts] == pytest.approx([1e-3, 7.2e-4, 5.2e-4, 3.7e-4, 2.7e-4, 1.9e-4,
                                                              1.4e-4, 1e-4])
    step = learning_rates(ScheduleConfig(name="step", step_size=2, gamma=0.5), 0.1, 5)
    assert step == pytest.approx([0.1, 0.1, 0.05, 0.05, 0.025])
    assert learning_rates(ScheduleConfig(), 0.1, 3) == [0.1, 0.1, 0.1]


def test_vr_caltech_schedule_has_stages_of_two_to_the_i_epochs():
    """VRbound exp_details.tex l. 13: Caltech as MNIST but Σ_{i=0}^{7} 2^i = 255 epochs (stage i: 2^{i−1})."""
    schedule = ScheduleConfig(name="iwae", rounded=True, stage_growth=2)
    assert schedule.iwae_epochs == 255
    rates = learning_rates(schedule, 1e-3, 255)
    starts = [1 + sum(2 ** j for j in range(i - 1)) for i in range(1, 9)]
    assert starts == [1, 2, 4, 8, 16, 32, 64, 128]
    assert [rates[s - 1] for s in starts] == pytest.approx([1e-3, 7.2e-4, 5.2e-4, 3.7e-4, 2.7e-4, 1.9e-4, 1.4e-4,
                                                            1e-4])
    assert [schedule.stage(e) for e in (1, 2, 3, 4, 7, 8, 127, 128, 255)] == [1, 2, 2, 3, 3, 4, 7, 8, 8]
    assert len(set(rates[127:255])) == 1  # the last stage's 128 epochs at one rate


class TinyVAE(VariationalTask):
    def __init__(self):
        model = build_vae(ModelConfig(latent=[2], encoder_hidden=[[8]], decoder_hidden=[[8]], activation="tanh"), 6)
        super().__init__(model, IWAE(n_samples=3), valid=(_images()[:8]))


def _images(n: int = 64):
    g = torch.Generator().manual_seed(3)
    return (torch.rand(n, 6, generator=g) < torch.linspace(0.1, 0.9, 6)).float()


def _train_vae(epochs, work_dir=None, task_cls=TinyVAE):
    seed_everything(11)
    task = task_cls()
    cfg = TrainConfig(epochs=epochs, batch_size=16, seed=11, log_every=1,
                      optimizer=OptimizerConfig(name="adam", lr=1e-2, betas=(0.99, 0.999), eps=1e-4),
                      schedule=ScheduleConfig(name="iwae", stages=3))
    return Trainer(cfg, work_dir=work_dir, label="test/vae").fit(task, (_images(),)), task


@pytest.mark.slow
def test_trainer_applies_the_schedule_and_variational_task_reports_validation():
    history, task = _train_vae(6)
    expected = learning_rates(ScheduleConfig(name="iwae", stages=3), 1e-2, 6)
    assert [row["lr"] for row in history] == pytest.approx(expected)
    opt_group = task.train_config.optimizer
    assert opt_group.betas == (0.99, 0.999) and opt_group.eps == 1e-4
    assert {"valid_loss", "valid_l1"} <= set(history[-1])
    assert history[-1]["train_loss"] < history[0]["train_loss"]


@pytest.mark.slow
def test_resume_mid_schedule_equals_an_uninterrupted_run(tmp_path):
    full, full_task = _train_vae(6)

    class Interrupt(Exception):
        pass

    class Interrupted(TinyVAE):
        def on_epoch_end(self, epoch, metrics):
            if epoch == 3:  # inside stage 2 (epochs 2-4) of the IWAE schedule
                raise Interrupt
            return False

    with pytest.raises(Interrupt):
        _train_vae(6, work_dir=tmp_path, task_cls=Interrupted)
    resumed, resumed_task = _train_vae(6, work_dir=tmp_path)
    assert [r["train_loss"] for r in resumed] == [r["train_loss"] for r in full]
    assert [r["lr"] for r in resumed] == [r["lr"] for r in full]
    for a, b in zip(full_task.model.state_dict().values(), resumed_task.model.state_dict().values()):
        assert torch.equal(a, b)



# ------------------------------------------------------------------------------- the spec's train: block
def test_nested_train_block_becomes_typed_config_and_errors_name_the_full_key_path(tmp_path):
    from dataclasses import dataclass, field

    from fyexp.core.errors import SpecError
    from fyexp.spec.specs import load_spec, resolve

    @dataclass
    class Cfg:
        train: TrainConfig = field(default_factory=TrainConfig)

    def spec(train_block: str):
        (tmp_path / "exp.yaml").write_text(
            "name: exp\ntitle: t\nrunner: gmm_clustering\n"
            "defaults:\n  train: {epochs: 3, optimizer: {name: adam, lr: 1.0e-3}}\n"
            f"profiles:\n  quick:\n    train: {train_block}\n")
        return resolve(load_spec("exp", tmp_path), "quick", Cfg).config

    cfg = spec("{batch_size: 20, optimizer: {betas: [0.99, 0.999], eps: 1.0e-4}, schedule: {name: iwae}}")
    assert cfg.train.epochs == 3 and cfg.train.batch_size == 20  # deep-merged with the defaults
    assert cfg.train.optimizer == OptimizerConfig(name="adam", lr=1e-3, betas=(0.99, 0.999), eps=1e-4)
    assert cfg.train.schedule.name == "iwae"
    for block, key, expected in [("{optimizer: {lr: -1}}", "profiles.quick.train.optimizer.lr", "a positive number"),
                                 ("{optimizer: {name: adamax}}", "profiles.quick.train.optimizer.name", "one of"),
                                 ("{schedule: {kind: iwae}}", "profiles.quick.train.schedule.kind", "one of the"),
                                 ("{epochs: 0}", "profiles.quick.train.epochs", "an integer >= 1"),
                                 ("{optimizer: {betas: [0.9]}}", "profiles.quick.train.optimizer.betas", "a list")]:
        with pytest.raises(SpecError) as info:
            spec(block)
        message = str(info.value)
        assert str(tmp_path / "exp.yaml") in message and f"'{key}'" in message and expected in message, message


def _trajectory(make, dtype):
    """The parameters after 100 steps of ``make(params)`` on a noisy elementwise objective Σ w ⊙ (sin 3θ + θ²/2),
    w fresh uniform noise each step.  Its gradient is elementwise, so it is the same bits in every run (a matmul's
    or a sum's float32 rounding can depend on where a buffer lies in memory); the shapes leave tails off the
    vector width."""
    torch.manual_seed(0)
    params = [nn.Parameter(torch.randn(shape, dtype=dtype)) for shape in ((37, 53), (29,), (3, 7, 11))]
    optimizer = make(params)
    noise = torch.Generator().manual_seed(1)
    for _ in range(100):
        loss = sum((torch.rand(p.shape, generator=noise, dtype=dtype) * (torch.sin(3 * p) + p ** 2 / 2)).sum()
                   for p in params)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return torch.cat([p.detach().flatten() for p in params])


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("config, reference", [
    (OptimizerConfig(name="adam", lr=1e-2), lambda p: torch.optim.Adam(p, lr=1e-2, foreach=False)),
    (OptimizerConfig(name="adam", lr=1e-3, betas=(0.99, 0.999), eps=1e-4, weight_decay=0.1),
     lambda p: torch.optim.Adam(p, lr=1e-3, betas=(0.99, 0.999), eps=1e-4, weight_decay=0.1, foreach=False)),
    (OptimizerConfig(name="adamw", lr=1e-2, weight_decay=0.01),
     lambda p: torch.optim.AdamW(p, lr=1e-2, weight_decay=0.01, foreach=False)),
    (OptimizerConfig(name="rmsprop", lr=1e-3, momentum=0.9, eps=1e-6, weight_decay=1e-2),
     lambda p: torch.optim.RMSprop(p, lr=1e-3, momentum=0.9, eps=1e-6, weight_decay=1e-2, foreach=False)),
    (OptimizerConfig(name="sgd", lr=1e-2, momentum=0.9, weight_decay=1e-3),
     lambda p: torch.optim.SGD(p, lr=1e-2, momentum=0.9, weight_decay=1e-3, foreach=False)),
])
def test_make_optimizer_computes_the_per_parameter_loops_numbers_bit_for_bit(config, reference, dtype):
    """The optimizers fyexp builds (multi-tensor Adam/AdamW/RMSprop, SGD's loop) give exactly the numbers of
    torch's per-parameter loop, the CPU default every committed row was trained with: a faster update must not
    move a row.  (Fused Adam rounds differently and fails this.)"""
    ours = _trajectory(lambda p: make_optimizer(config, p), dtype)
    theirs = _trajectory(reference, dtype)
    assert torch.equal(ours, theirs)
    assert not torch.equal(ours, _trajectory(lambda p: torch.optim.SGD(p, lr=1e-4), dtype))
