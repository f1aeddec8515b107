"""The IWAE code's Adam (fyexp.train.iwae_adam): its update against a transcription of yburda/iwae optimizers.py
(Theano's simultaneous updates written out in numpy, on the gradient of a minibatch *sum*), its first step, its
scale dependence, its routing through make_optimizer and the Trainer, and a resume mid-run."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from fyexp.core.errors import ConfigValueError
from fyexp.train import (OptimizerConfig, ScheduleConfig, TrainConfig, Trainer, TrainTask, make_optimizer,
                         seed_everything)
from fyexp.train.iwae_adam import IWAEAdam

TARGET = np.array([0.5, -1.0, 2.0])


def _mean_loss_grad(x: np.ndarray, batch: np.ndarray) -> np.ndarray:
    """∇ of (1/B) Σ_b ½ ‖x ∘ batch_b − TARGET‖²: a minibatch *mean*, as fyexp's losses are."""
    return np.mean((x * batch - TARGET) * batch, axis=0)


def _batches(steps: int, size: int = 4) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.uniform(0.5, 1.5, size=(size, 3)) for _ in range(steps)]


def _theirs(x0: np.ndarray, batches, lr=1e-3, b1=0.99, b2=0.999, eps=1e-4) -> list[np.ndarray]:
    """optimizers.py lines 10-37, transcribed: m = 0, v = 1, t = 1; per call every update is computed from the
    values before the call (Theano's updates are simultaneous); the gradient is of the minibatch sum of the bound,
    ascended, i.e. minus the gradient of the summed loss."""
    x, m, v, t = x0.copy(), np.zeros(3), np.ones(3), 1.0
    path = []
    for batch in batches:
        grad_bound = -len(batch) * _mean_loss_grad(x, batch)      # of the summed bound
        new_m = b1 * m + (1 - b1) * grad_bound
        new_v = b2 * v + (1 - b2) * grad_bound ** 2
        alpha = lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        new_x = x + alpha * m / (np.sqrt(v) + eps)                 # the moments before this call's updates
        x, m, v, t = new_x, new_m, new_v, t + 1
        path.append(x.copy())
    return path


def _ours(x0: np.ndarray, batches, optimizer_cls=IWAEAdam, **kwargs) -> list[np.ndarray]:
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    opt = optimizer_cls([x], **kwargs)
    path = []
    for batch in batches:
        b = torch.tensor(batch)
        loss = (0.5 * ((x * b - torch.tensor(TARGET)) ** 2).sum(-1)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        path.append(x.detach().numpy().copy())
    return path


def test_the_update_is_the_iwae_codes_on_the_summed_gradient():
    x0, batches = np.array([1.0, 1.0, 1.0]), _batches(30)
    theirs = _theirs(x0, batches, lr=0.05)
    ours = _ours(x0, batches, lr=0.05, betas=(0.99, 0.999), eps=1e-4, summed_over=4)
    np.testing.assert_allclose(np.array(ours), np.array(theirs), rtol=1e-12, atol=1e-14)
    assert np.abs(theirs[-1] - x0).max() > 1e-3                     # it moved


def test_the_first_step_does_not_move_the_parameters_and_the_second_does():
    x0, batches = np.array([1.0, -2.0, 0.3]), _batches(2)
    ours = _ours(x0, batches, lr=0.1, summed_over=4)
    np.testing.assert_array_equal(ours[0], x0)                      # m_0 = 0
    assert np.abs(ours[1] - x0).min() > 0


def test_unlike_kingma_and_bas_adam_the_update_depends_on_the_gradients_scale():
    """v_0 = 1 and ε = 1e-4 make the step depend on summed_over; torch's Adam (v_0 = 0) hardly does."""
    x0, batches = np.array([1.0, 1.0, 1.0]), _batches(20)
    one, twenty = _ours(x0, batches, lr=0.05, summed_over=1), _ours(x0, batches, lr=0.05, summed_over=20)
    assert np.abs(one[-1] - twenty[-1]).max() > 1e-3
    adam = _ours(x0, batches, torch.optim.Adam, lr=0.05, betas=(0.99, 0.999), eps=1e-4)
    assert np.abs(adam[-1] - twenty[-1]).max() > 1e-3


def test_make_optimizer_gives_the_batch_size_to_adam_iwae_only():
    params = [torch.nn.Parameter(torch.zeros(2))]
    opt = make_optimizer(OptimizerConfig(name="adam_iwae", lr=2e-3, betas=(0.99, 0.999), eps=1e-4), params,
                         batch_size=20)
    assert isinstance(opt, IWAEAdam)
    assert opt.defaults == {"lr": 2e-3, "betas": (0.99, 0.999), "eps": 1e-4, "summed_over": 20.0}
    assert isinstance(make_optimizer(OptimizerConfig(name="adam"), params, batch_size=20), torch.optim.Adam)
    with pytest.raises(ConfigValueError, match="weight_decay"):
        OptimizerConfig(name="adam_iwae", weight_decay=0.01)


class Line(TrainTask):
    """y = w·x, the default optimizer (make_optimizer with the config's batch size)."""

    def __init__(self):
        self.model = torch.nn.Linear(3, 1)

    def loss(self, batch):
        x, y = batch
        mse = (self.model(x).squeeze(-1) - y).pow(2).mean()
        return mse, {}


def _fit(epochs, work_dir=None, task_cls=Line):
    seed_everything(5)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(48, 3, generator=g)
    task = task_cls()
    config = TrainConfig(epochs=epochs, batch_size=8, seed=5, log_every=1,
                         optimizer=OptimizerConfig(name="adam_iwae", lr=1e-2, betas=(0.99, 0.999), eps=1e-4),
                         schedule=ScheduleConfig(name="iwae", stages=3, stage_growth=2))
    history = Trainer(config, work_dir=work_dir, label="test/iwae-adam").fit(task, (x, x @ TARGET_T))
    return history, task


TARGET_T = torch.tensor(TARGET, dtype=torch.float32)


def test_the_trainer_builds_it_with_the_batch_size_and_a_resumed_run_ends_where_an_uninterrupted_one_does(tmp_path):
    full, task = _fit(5)

    class Interrupt(Exception):
        pass

    class Interrupted(Line):
        def on_epoch_end(self, epoch, metrics):
            if epoch == 2:
                raise Interrupt

    with pytest.raises(Interrupt):
        _fit(5, tmp_path, Interrupted)
    resumed, resumed_task = _fit(5, tmp_path)
    assert [r["train_loss"] for r in resumed] == [r["train_loss"] for r in full]
    for a, b in zip(resumed_task.model.parameters(), task.model.parameters()):
        assert torch.equal(a, b)
    saved = torch.load(tmp_path / "checkpoint.pt", weights_only=False)["optimizers"]["main"]
    assert saved["param_groups"][0]["summed_over"] == 8.0                 # the config's batch size
    assert {float(s["step"]) for s in saved["state"].values()} == {5 * 6 + 1.0}   # 48/8 = 6 steps an epoch, t_0 = 1
    assert full[-1]["train_loss"] < full[0]["train_loss"]
