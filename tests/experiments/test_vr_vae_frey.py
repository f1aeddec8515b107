"""vr-vae's Frey Face protocol (the VR authors' vae_autograd code): the sigmoid-mean Gaussian decoder against a hand
computation, the seeded 90/10 splits, the weight prior's gradient, the N(0, 0.01²) initialization, the task and
objective a Frey Face cell builds under each protocol, and the spec's paper settings."""

import dataclasses
import math
import pickle

import numpy as np
import pytest
import torch

from fyexp.experiments.vr_vae_config import FreyProtocol
from fyexp.experiments.vr_vae_frey import WeightPriorTask, normal_init, weight_penalty
from fyexp.models import ModelConfig, build_vae
from fyexp.models.heads import Gaussian, SigmoidMeanGaussian

# weight_prior 0: the authors' prior term 0.5 · W · (M / N) is zero under Python 2's integer division
AUTHORS = FreyProtocol(mean="sigmoid", init_std=0.01, weight_prior=0.0, splits="seeded", train_fraction=0.9,
                       elbo="mc")
WITH_PRIOR = dataclasses.replace(AUTHORS, weight_prior=0.5)  # the term as written, read with true division


def test_sigmoid_mean_gaussian_log_likelihood_is_the_hand_computation():
    # scores (a, log σ²) for D = 2: sigmoid(a) = (0.5, 0.75), σ² = (1, 4); x = (0.5, 0.25)
    scores = torch.tensor([[[0.0, math.log(3.0), 0.0, math.log(4.0)]]], dtype=torch.float64)
    x = torch.tensor([[0.5, 0.25]], dtype=torch.float64)
    # −½ Σ_d (log 2π + log σ²_d + (x_d − μ_d)² / σ²_d) = −½ (2 log 2π + log 4 + 0 + 0.25² / 4)
    hand = -0.5 * (2 * math.log(2 * math.pi) + math.log(4.0) + 0.0625)
    assert float(SigmoidMeanGaussian().log_prob(scores, x)) == pytest.approx(hand, rel=1e-12)
    torch.testing.assert_close(SigmoidMeanGaussian().mean(scores), torch.tensor([[[0.5, 0.75]]], dtype=torch.float64))
    # the linear-mean head reads the same scores as μ = (0, log 3): another value
    linear = -0.5 * (2 * math.log(2 * math.pi) + math.log(4.0) + 0.25 + (0.25 - math.log(3.0)) ** 2 / 4)
    assert float(Gaussian().log_prob(scores, x)) == pytest.approx(linear, rel=1e-12)
    assert abs(linear - hand) > 0.1


def test_the_frey_decoder_mean_lies_in_the_unit_interval_with_the_sigmoid_head_only():
    cfg = dict(latent=[2], encoder_hidden=[[4]], decoder_hidden=[[4]], activation="softplus")
    torch.manual_seed(0)
    sigmoid = build_vae(ModelConfig(**cfg, observation="gaussian_sigmoid"), 3)
    torch.manual_seed(0)
    linear = build_vae(ModelConfig(**cfg, observation="gaussian"), 3)
    z = 10 * torch.randn(50, 2)
    a = linear.decode(z).chunk(2, -1)[0]
    torch.testing.assert_close(sigmoid.observation.mean(sigmoid.decode(z)), torch.sigmoid(a))  # same weights
    assert a.min() < 0 or a.max() > 1  # the linear mean leaves [0, 1] somewhere


def test_seeded_split_is_the_authors_shuffle_then_cut():
    from fyexp.data.vr_images import seeded_split

    data = torch.arange(10, dtype=torch.float32).unsqueeze(1)
    # np.random.seed(0); np.random.shuffle(rows) orders 0…9 as 2 8 4 9 1 6 7 3 0 5; int(0.7 · 10) = 7 train
    train, test = seeded_split(data, 0, 0.7)
    assert train.squeeze(1).long().tolist() == [2, 8, 4, 9, 1, 6, 7] and test.squeeze(1).long().tolist() == [3, 0, 5]
    rows = np.arange(10)[:, None].copy()  # the authors' procedure on a 2-D array, transcribed
    np.random.seed(1)
    np.random.shuffle(rows)
    train, test = seeded_split(data, 1, 0.7)
    assert test.squeeze(1).long().tolist() == rows[7:, 0].tolist() == [7, 8, 5]
    train, test = seeded_split(torch.zeros(1965, 1), 4)
    assert (len(train), len(test)) == (1768, 197)  # int(0.9 · 1965): the demo's sizes


def test_frey_data_follow_the_protocols_splits(tmp_path):
    from fyexp.data.freyface import fold_split
    from fyexp.data.vr_images import load_data, seeded_split
    from fyexp.experiments.vr_vae import Config

    (tmp_path / "FreyFace").mkdir()
    faces = np.arange(50 * 560, dtype=np.int64).reshape(50, 560) % 256
    with open(tmp_path / "FreyFace" / "freyfaces.pkl", "wb") as handle:
        pickle.dump([faces.astype(np.uint8)], handle)
    images = torch.tensor(faces, dtype=torch.float32) / 255
    seeded = load_data(Config(n_folds=10, fold_seed=2, freyface=AUTHORS), "freyface", 3, tmp_path)
    expected = seeded_split(images, 2 + 3, 0.9)
    torch.testing.assert_close(seeded.test, expected[1])
    assert (len(seeded.train), len(seeded.test)) == (45, 5)
    partition = load_data(Config(n_folds=10, fold_seed=2), "freyface", 3, tmp_path)
    torch.testing.assert_close(partition.test, fold_split(images, 3, 10, 2)[1])
    assert not torch.equal(partition.test, seeded.test)


def test_weight_penalty_gradient_is_the_authors_prior_term_on_weights_only():
    torch.manual_seed(0)
    vae = build_vae(ModelConfig(latent=[2], encoder_hidden=[[3]], decoder_hidden=[[3]], activation="softplus",
                                observation="gaussian_sigmoid"), 4).double()
    coefficient, n_train = 0.5, 8
    weight_penalty(vae, coefficient, n_train).backward()
    for name, p in vae.named_parameters():
        # the authors subtract c · W · M / N from the gradient of a sum over M points: c · W / N per point
        if p.dim() >= 2:
            torch.testing.assert_close(p.grad, coefficient * p.detach() / n_train, msg=name)
        else:  # no prior on the biases
            assert p.grad is None, name
    assert float(weight_penalty(vae, 0.0, n_train).detach()) == 0.0


def test_weight_prior_task_adds_the_penalty_to_the_bound_loss():
    from fyexp.objectives import IWAE
    from fyexp.train.binarizing import BinarizingTask

    torch.manual_seed(0)
    vae = build_vae(ModelConfig(latent=[2], encoder_hidden=[[3]], decoder_hidden=[[3]], activation="softplus",
                                observation="gaussian_sigmoid"), 4).double()
    x = torch.rand(6, 4, dtype=torch.float64)
    task = WeightPriorTask(vae, IWAE(n_samples=3), False, coefficient=2.0, n_train=5)
    torch.manual_seed(1)
    loss, parts = task.loss((x,))
    torch.manual_seed(1)
    plain, _ = BinarizingTask(vae, IWAE(n_samples=3), False).loss((x,))
    penalty = weight_penalty(vae, 2.0, 5)
    torch.testing.assert_close(loss, plain + penalty)
    torch.testing.assert_close(parts["weight_penalty"], penalty.detach())
    assert float(penalty.detach()) > 0


def test_normal_init_draws_every_weight_and_bias_at_the_authors_scale():
    from fyexp.models.vr_architectures import model_config

    torch.manual_seed(0)
    vae = build_vae(model_config("freyface", 1), 560)
    first = vae.encoder.body[0].weight.detach()
    assert float(first.std()) > 0.02  # torch's default U(±1/√560): std 0.0244
    normal_init(vae, 0.01)
    values = torch.cat([p.detach().flatten() for p in vae.parameters()])
    assert float(values.std()) == pytest.approx(0.01, rel=0.01) and abs(float(values.mean())) < 2e-4
    biases = torch.cat([p.detach() for p in vae.parameters() if p.dim() == 1])
    assert float(biases.std()) == pytest.approx(0.01, rel=0.1)  # the biases too (sigmaInit for b)


def _frey_cell_task(protocol, method="vae", dataset="freyface"):
    from fyexp.data.vr_images import VRData
    from fyexp.experiments.vr_vae import VRVAE, Config
    from fyexp.store.results import Cell

    width = 560 if dataset == "freyface" else 784
    data = VRData(train=torch.rand(30, width), test=torch.rand(5, width), binarize=dataset != "freyface")
    params = {"dataset": dataset, "L": 1, "K": 5, **({"fold": 0} if dataset == "freyface" else {})}
    return VRVAE()._task(Config(freyface=protocol), Cell(method, 0, params), data)


def test_a_frey_cell_builds_the_authors_model_and_objective_under_their_protocol():
    from fyexp.objectives import ELBO
    from fyexp.objectives.single_backward import VRMaxSingle

    task = _frey_cell_task(AUTHORS)
    assert not isinstance(task, WeightPriorTask)
    with_prior = _frey_cell_task(WITH_PRIOR)
    assert isinstance(with_prior, WeightPriorTask) and (with_prior.coefficient, with_prior.n_train) == (0.5, 30)
    assert isinstance(task.model.observation, SigmoidMeanGaussian)
    assert task.objective == ELBO(n_samples=5, analytic=False)  # the Monte Carlo KL
    assert float(torch.cat([p.detach().flatten() for p in task.model.parameters()]).std()) < 0.012
    assert isinstance(_frey_cell_task(AUTHORS, "vr_max").objective, VRMaxSingle)

    old = _frey_cell_task(FreyProtocol())  # the defaults: our settings before
    assert isinstance(old.model.observation, Gaussian) and not isinstance(old.model.observation, SigmoidMeanGaussian)
    assert old.objective == ELBO(n_samples=5, analytic=True) and not isinstance(old, WeightPriorTask)
    assert float(old.model.encoder.body[0].weight.std()) > 0.02

    caltech = _frey_cell_task(WITH_PRIOR, dataset="caltech")  # Caltech and MNIST ignore the Frey Face block
    assert not isinstance(caltech, WeightPriorTask) and caltech.objective == ELBO(n_samples=5)


def test_the_paper_profile_follows_the_authors_frey_settings_and_only_frey_cells_depend_on_them():
    from fyexp.experiments import get_experiment
    from fyexp.store.results import Cell
    from fyexp.spec.specs import load_spec, resolve

    spec = load_spec("vr-vae")
    experiment = get_experiment(spec.runner)
    config = resolve(spec, "paper", experiment.Config, seeds=[0]).config
    assert config.freyface == AUTHORS
    train = config.train_freyface
    assert (train.batch_size, train.drop_last, train.optimizer.lr, train.optimizer.eps) == (100, True, 5e-4, 1e-9)
    assert tuple(train.optimizer.betas) == (0.9, 0.999)
    frey = experiment.cell_config(config, Cell("vae", 0, {"dataset": "freyface", "L": 1, "K": 5, "fold": 0}))
    caltech = experiment.cell_config(config, Cell("vae", 0, {"dataset": "caltech", "L": 1, "K": 5}))
    assert frey["freyface"]["mean"] == "sigmoid" and "freyface" not in caltech


@pytest.mark.slow
def test_frey_face_cell_end_to_end_at_the_authors_protocol(tmp_path):
    from fyexp.experiments.base import RunContext
    from fyexp.experiments.vr_vae import VRVAE, Config, Grid
    from fyexp.store.results import Cell
    from fyexp.train import OptimizerConfig, TrainConfig

    (tmp_path / "FreyFace").mkdir()
    faces = np.random.default_rng(0).integers(0, 256, size=(40, 560), dtype=np.uint8)
    with open(tmp_path / "FreyFace" / "freyfaces.pkl", "wb") as handle:
        pickle.dump([faces], handle)
    grid = Grid(include=[{"dataset": "freyface", "L": 1, "K": 5, "method": "iwae", "fold": 1}])
    config = Config(grid=grid, freyface=AUTHORS, test_samples=20, test_chunk=10,
                    train_freyface=TrainConfig(epochs=2, batch_size=10, drop_last=True,
                                               optimizer=OptimizerConfig(lr=1e-3, eps=1e-9)))
    ctx = RunContext("vr-vae", "test", "cpu", tmp_path, tmp_path / "work", tmp_path / "art")
    rows = VRVAE().run_cell(config, Cell("iwae", 0, {"dataset": "freyface", "L": 1, "K": 5, "fold": 1}), ctx)
    ll = next(r for r in rows if r["metric"] == "test_loglik")
    assert ll["n_test"] == 4 and math.isfinite(ll["value"])  # 40 faces: int(0.9 · 40) = 36 train, 4 test


@pytest.mark.slow
def test_the_installed_cli_shows_the_authors_frey_block_and_rejects_a_bad_one_in_one_line():
    import yaml

    from tests.conftest import run_cli

    shown = run_cli("show", "vr-vae", "--profile", "paper")
    assert shown.returncode == 0, shown.stderr
    block = shown.stdout.split("\n  freyface:\n", 1)[1].split("\n  train_freyface:", 1)[0]
    assert yaml.safe_load(block) == {"mean": "sigmoid", "init_std": 0.01, "weight_prior": 0.0, "splits": "seeded",
                                  "train_fraction": 0.9, "elbo": "mc"}
    bad = run_cli("show", "vr-vae", "--profile", "paper", "--set", "freyface.train_fraction=1.5")
    assert bad.returncode == 2 and "freyface.train_fraction': expected a number in (0, 1)" in bad.stderr
    assert "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
