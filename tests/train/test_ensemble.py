"""The ensemble: every member equals its solo run (init, data order, noise, Adam state), per-member NaN guard,
per-member checkpoints and resume."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from fyexp.core.errors import CellFailed, FyexpError
from fyexp.models import ModelConfig, build_vae
from fyexp.objectives import ELBO, IWAE
from fyexp.train import (EnsembleMember, OptimizerConfig, ScheduleConfig, TrainConfig, Trainer, VariationalTask,
                         seed_everything)
from fyexp.train.ensemble import MemberRandomness

SEEDS = (0, 1, 5)

MODELS = {
    # Gaussian posterior: torch.distributions.Normal draws with Tensor.normal_ on a fresh tensor
    "gaussian-iwae": (dict(posterior="gaussian", observation="bernoulli", activation="tanh"),
                      lambda: IWAE(n_samples=3)),
    # fy-vae's network at ρ = 1 (β-Gaussian class, torch.randn) with the sparse ρ′ = 2 head and the β-ELBO
    "fy-vae": (dict(posterior="beta_gaussian", posterior_rho=1.0, observation="binary_entmax", observation_rho=2.0,
                    activation="relu"), lambda: ELBO(beta=0.01)),
    # fy-vae at ρ = 1.5: the β-Gaussian's radius r² ~ Beta, drawn with torch._sample_dirichlet once per member
    "fy-vae-sparse": (dict(posterior="beta_gaussian", posterior_rho=1.5, observation="binary_entmax",
                           observation_rho=2.0, activation="relu"), lambda: ELBO(beta=0.01)),
}


def _images(seed: int = 3, n: int = 48, d: int = 6) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(n, d, generator=g) < torch.linspace(0.1, 0.9, d)).float()


def _config(epochs: int, **kw) -> TrainConfig:
    return TrainConfig(epochs=epochs, batch_size=16, log_every=2,
                       optimizer=OptimizerConfig(name="adamw", lr=2e-2, weight_decay=0.1),
                       schedule=ScheduleConfig(name="step", step_size=1, gamma=0.5), **kw)


def _task(kind: str, seed: int) -> VariationalTask:
    """Built as a cell builds it: seed everything, then the model."""
    model_kw, objective = MODELS[kind]
    seed_everything(seed)
    model = build_vae(ModelConfig(latent=[2], encoder_hidden=[[8]], decoder_hidden=[[8]], **model_kw), 6)
    return VariationalTask(model, objective(), valid=_images(9, 8))


def _solo(kind, seed, epochs=3, data=None, work_dir=None):
    task = _task(kind, seed)
    cfg = _config(epochs, seed=seed)
    history = Trainer(cfg, work_dir=work_dir, label=f"t/{seed}").fit(task, (data if data is not None else _images(),))
    return history, task, torch.rand(4)   # what an evaluation after training would draw


def _members(kind, seeds=SEEDS, data=None, work_dirs=None, task_cls=None):
    members = []
    for i, seed in enumerate(seeds):
        task = _task(kind, seed)
        if task_cls is not None:
            task.__class__ = task_cls
        members.append(EnsembleMember(task, (data[i] if data is not None else _images(),), seed,
                                      work_dir=work_dirs[i] if work_dirs else None, label=f"t/{seed}"))
    return members


def _ensemble(kind, epochs=3, **kw):
    members = _members(kind, **kw)
    return Trainer(_config(epochs), label="t").fit_ensemble(members), members


def _close(a: list[dict], b: list[dict], keys=("train_loss", "train_reconstruction", "valid_loss", "valid_l1", "lr")):
    assert [r["epoch"] for r in a] == [r["epoch"] for r in b]
    for ra, rb in zip(a, b):
        for key in keys:
            if key in ra or key in rb:
                assert ra[key] == pytest.approx(rb[key], rel=1e-5, abs=1e-6), (key, ra, rb)


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(MODELS))
def test_every_member_equals_its_solo_run(kind):
    results, members = _ensemble(kind)
    histories = []
    for seed, result, member in zip(SEEDS, results, members):
        solo_history, solo_task, solo_next = _solo(kind, seed)
        assert result.error is None
        _close(result.unwrap(), solo_history)
        for (name, a), b in zip(member.task.model.named_parameters(), solo_task.model.parameters()):
            assert torch.allclose(a, b, rtol=1e-4, atol=1e-6), name
        result.restore_rng()                 # evaluation after training draws what the solo run's draws
        assert torch.equal(torch.rand(4), solo_next)
        histories.append([r["train_loss"] for r in result.history])
    assert len({tuple(h) for h in histories}) == len(SEEDS)   # the members are different runs
    assert results[0].history[-1]["lr"] == pytest.approx(2e-2 * 0.25)   # the schedule applies to every member


def test_a_diverging_member_fails_alone_with_its_solo_error():
    data = [_images(), _images(), _images()]
    data[1] = data[1].clone()
    data[1][20, 3] = float("nan")            # reached in epoch 1 by member 1 only
    results, _ = _ensemble("fy-vae", data=data)
    with pytest.raises(CellFailed) as solo_error:
        _solo("fy-vae", SEEDS[1], data=data[1])
    assert results[1].error is not None and str(results[1].error) == str(solo_error.value)
    with pytest.raises(CellFailed, match=r"t/1: non-finite loss in epoch 1"):
        results[1].unwrap()
    for i in (0, 2):
        _close(results[i].unwrap(), _solo("fy-vae", SEEDS[i], data=data[i])[0])


@pytest.mark.slow
def test_resume_of_an_interrupted_ensemble_equals_an_uninterrupted_run(tmp_path):
    full, _ = _ensemble("fy-vae", epochs=4)

    class Interrupt(Exception):
        pass

    target = []

    class Interrupted(VariationalTask):
        def on_epoch_end(self, epoch, metrics):
            if epoch == 2 and self is target[0]:
                raise Interrupt   # member 0 has saved epoch 2, the others only epoch 1: two start epochs on resume
            return False

    dirs = [tmp_path / str(seed) for seed in SEEDS]
    members = _members("fy-vae", work_dirs=dirs, task_cls=Interrupted)
    target.append(members[0].task)
    with pytest.raises(Interrupt):
        Trainer(_config(4), label="t").fit_ensemble(members)
    assert [torch.load(d / "checkpoint.pt", weights_only=False)["epoch"] for d in dirs] == [2, 1, 1]
    resumed = Trainer(_config(4), label="t").fit_ensemble(_members("fy-vae", work_dirs=dirs))
    for a, b in zip(resumed, full):
        _close(a.unwrap(), b.unwrap())
        assert len((dirs[0] / "metrics.csv").read_text().strip().splitlines()) == 1 + 4
    # a member's checkpoint is its solo run's: the solo trainer sees it finished and returns its history
    again, _, _ = _solo("fy-vae", SEEDS[2], epochs=4, work_dir=dirs[2])
    assert [r["train_loss"] for r in again] == [r["train_loss"] for r in resumed[2].history]
    assert again[-1]["valid_l1"] == pytest.approx(_solo("fy-vae", SEEDS[2], epochs=4)[0][-1]["valid_l1"], rel=1e-5)


def test_members_must_share_architecture_and_settings():
    members = _members("fy-vae", seeds=(0, 1))
    members[1].task.model = build_vae(ModelConfig(latent=[3], encoder_hidden=[[8]], decoder_hidden=[[8]]), 6)
    with pytest.raises(FyexpError, match="one task, architecture and settings"):
        Trainer(_config(1), label="t").fit_ensemble(members)
    members = _members("fy-vae", seeds=(0, 1))   # same shapes, another head ρ′: the loss code would differ
    members[1].task.model.observation.rho = 1.0
    with pytest.raises(FyexpError, match="differs from t/0"):
        Trainer(_config(1), label="t").fit_ensemble(members)
    members = _members("fy-vae", seeds=(0, 1))   # another β
    members[1].task.objective = ELBO(beta=1.0)
    with pytest.raises(FyexpError, match="differs from t/0"):
        Trainer(_config(1), label="t").fit_ensemble(members)


def test_member_randomness_draws_each_members_stream_under_vmap():
    states = []
    for seed in (3, 4):
        torch.manual_seed(seed)
        states.append({"torch": torch.get_rng_state()})

    def draw(w):
        dropped = torch.nn.functional.dropout(torch.ones(5), 0.5)
        return w + torch.randn(2) + torch.empty(3).normal_().sum() + dropped.sum()

    with MemberRandomness(states, "cpu"):
        out = torch.func.vmap(draw, randomness="error")(torch.zeros(2, 2))
    for row, seed in zip(out, (3, 4)):
        torch.manual_seed(seed)
        dropped = torch.nn.functional.dropout(torch.ones(5), 0.5)
        assert torch.allclose(row, torch.randn(2) + torch.empty(3).normal_().sum() + dropped.sum())


# ------------------------------------------------------------------------------------ fy-vae on the ensemble
@pytest.mark.slow
def test_fy_vae_prefit_trains_the_seeds_together_and_cells_report_their_solo_numbers(tmp_path, monkeypatch):
    """``FYVAE.prefit`` (train.ensemble: true) then ``run_cell`` gives each seed the rows of its solo run."""
    from fyexp.data.vision import ImageSplits
    from fyexp.experiments import fy_vae
    from fyexp.experiments.base import RunContext
    from fyexp.store.results import ResultStore
    from fyexp.spec.specs import build_config

    def synthetic(name, data_dir, n_train, n_valid, n_test=None):
        g = torch.Generator().manual_seed(0)
        images = (torch.rand(n_train + n_valid + 24, 784, generator=g) > 0.8).float()
        return ImageSplits(train=images[:n_train], valid=images[n_train:n_train + n_valid], test=images[-24:])

    monkeypatch.setattr(fy_vae, "image_splits", synthetic)
    values = {"grid": {"dataset": ["MNIST"], "obs_rho": [2.0], "latent_rho": [1.0, 1.5], "regularizer": ["fy"]},
              "n_train": 64, "n_valid": 8, "train": {"epochs": 2, "batch_size": 32, "optimizer": {"lr": 1e-3}},
              "hidden": 16, "latent": 4, "n_prior_samples": 2, "n_reconstructions": 2, "figure_seed": 99}
    solo_cfg = build_config(fy_vae.Config, values, "t.yaml", "profiles.t")
    ens_cfg = build_config(fy_vae.Config, {**values, "train": {**values["train"], "ensemble": True}}, "t.yaml",
                           "profiles.t")
    exp = fy_vae.FYVAE()

    def ctxs(root, cells):
        store = ResultStore(root, "fy-vae")
        return [RunContext(experiment="fy-vae", profile="t", device="cpu", data_dir=None,
                           work_dir=store.work_dir("t", c), artifact_dir=store.artifact_dir("t")) for c in cells]

    cells = exp.cells(ens_cfg, (0, 1, 2))
    ens_ctxs = ctxs(tmp_path / "ens", cells)
    for rho in (1.0, 1.5):   # one ensemble per cell, its seeds, as fyexp.run.runner.prefit_ensembles groups them
        group = [i for i, c in enumerate(cells) if c.params["latent_rho"] == rho]
        exp.prefit(ens_cfg, [cells[i] for i in group], [ens_ctxs[i] for i in group])
    assert all(torch.load(c.work_dir / "checkpoint.pt", weights_only=False)["done"] for c in ens_ctxs)

    class MustNotTrain(VariationalTask):
        def loss(self, batch):
            raise AssertionError("the cell retrained after prefit")

    original = exp._task
    monkeypatch.setattr(exp, "_task", lambda *a: _retype(original(*a), MustNotTrain))
    ensemble_rows = [exp.run_cell(ens_cfg, c, x) for c, x in zip(cells, ens_ctxs)]
    monkeypatch.setattr(exp, "_task", original)
    solo_rows = [exp.run_cell(solo_cfg, c, x) for c, x in zip(cells, ctxs(tmp_path / "solo", cells))]
    for ens, solo in zip(ensemble_rows, solo_rows):
        ens_values = {r["metric"]: r["value"] for r in ens if r["metric"] != "epoch_time_s"}
        solo_values = {r["metric"]: r["value"] for r in solo if r["metric"] != "epoch_time_s"}
        assert ens_values.keys() == solo_values.keys()
        for key in ens_values:
            assert ens_values[key] == pytest.approx(solo_values[key], rel=1e-5), key


def _retype(task, cls):
    task.__class__ = cls
    return task


def test_alternating_optimizers_and_dropout_members_equal_solo_runs():
    """Two optimizers stepping in alternate epochs (NVDM's scheme) and dropout (global-RNG noise in the model)."""
    from torch import nn

    from fyexp.train import TrainTask

    class Alternating(TrainTask):
        def __init__(self):
            self.model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.3), nn.Tanh(), nn.Linear(8, 1))

        def configure_optimizers(self):
            return {"first": torch.optim.Adam(self.model[0].parameters(), lr=1e-2),
                    "second": torch.optim.SGD(self.model[3].parameters(), lr=1e-2, momentum=0.9)}

        def optimizers_for_epoch(self, epoch):
            return ("first",) if epoch % 2 else ("second",)

        def loss(self, batch):
            x, y = batch
            mse = (self.model(x).squeeze(-1) - y).pow(2).mean()
            return mse, {"mse": mse}

    g = torch.Generator().manual_seed(1)
    x = torch.randn(40, 4, generator=g)
    data = (x, x.sum(-1))
    cfg = TrainConfig(epochs=3, batch_size=16, log_every=1)

    def built(seed):
        seed_everything(seed)
        return Alternating()

    members = [EnsembleMember(built(seed), data, seed, label=str(seed)) for seed in SEEDS]
    results = Trainer(cfg).fit_ensemble(members)
    for seed, result, member in zip(SEEDS, results, members):
        solo = built(seed)
        history = Trainer(dataclasses.replace(cfg, seed=seed)).fit(solo, data)
        _close(result.unwrap(), history, keys=("train_loss", "train_mse"))
        for a, b in zip(member.task.model.parameters(), solo.model.parameters()):
            assert torch.allclose(a, b, rtol=1e-5, atol=1e-7)


def test_a_loss_that_cannot_run_under_vmap_is_a_one_line_error():
    """torch.distributions.Beta draws through an autograd.Function, which vmap refuses."""
    from torch.distributions import Beta

    class BetaNoise(VariationalTask):
        def loss(self, batch):
            loss, parts = super().loss(batch)
            return loss * Beta(torch.tensor(2.0), torch.tensor(3.0)).sample(), parts

    members = [EnsembleMember(_retype(_task("fy-vae", seed), BetaNoise), (_images(),), seed, label=str(seed))
               for seed in (0, 1)]
    with pytest.raises(FyexpError, match="cannot train as an ensemble; use train.ensemble: false"):
        Trainer(_config(1), label="t").fit_ensemble(members)


@pytest.mark.slow
def test_members_under_the_iwae_codes_adam_equal_their_solo_runs():
    """vr-vae's ``paper`` trains Caltech and MNIST with ``adam_iwae`` (v0 = 1, a scalar timestep from one, the
    minibatch sum's gradient), and the GPU kit runs those cells as ensembles: stacked, its state steps each member
    as its solo run."""
    cfg = TrainConfig(epochs=3, batch_size=16, log_every=2,
                      optimizer=OptimizerConfig(name="adam_iwae", lr=2e-2, betas=(0.99, 0.999), eps=1e-4),
                      schedule=ScheduleConfig(name="step", step_size=1, gamma=0.5))
    members = _members("gaussian-iwae")
    results = Trainer(cfg, label="t").fit_ensemble(members)
    finals = []
    for seed, result, member in zip(SEEDS, results, members):
        solo = _task("gaussian-iwae", seed)
        history = Trainer(dataclasses.replace(cfg, seed=seed), label=f"t/{seed}").fit(solo, (_images(),))
        assert result.error is None
        _close(result.unwrap(), history)
        for (name, a), b in zip(member.task.model.named_parameters(), solo.model.parameters()):
            assert torch.allclose(a, b, rtol=1e-4, atol=1e-6), name
        finals.append(history[-1]["train_loss"])
    assert len(set(finals)) == len(SEEDS)
