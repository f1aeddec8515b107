"""vr-vae pieces: terms at given noise, single-backward VR-max / IWAE, the exact Rényi divergence of Figure 2(b),
Frey Face folds, the data loaders' errors."""

import math

import numpy as np
import pytest
import torch

from fyexp.models import ModelConfig, build_vae
from fyexp.models.replay import vae_noise, vae_terms_from_noise
from fyexp.objectives import IWAE
from fyexp.objectives.single_backward import VRMaxSingle, VRSingle


def tiny_vae(layers=1, seed=0):
    torch.manual_seed(seed)
    if layers == 1:
        cfg = ModelConfig(latent=[2], encoder_hidden=[[5]], decoder_hidden=[[5]], activation="tanh")
    else:
        cfg = ModelConfig(latent=[3, 2], encoder_hidden=[[5], [4]], decoder_hidden=[[5], [4]], activation="tanh")
    return build_vae(cfg, 6).double()


@pytest.mark.parametrize("layers", [1, 2])
def test_terms_from_noise_equal_vae_terms_under_one_rng_state(layers):
    vae = tiny_vae(layers)
    x = torch.rand(4, 6, dtype=torch.float64).round()
    torch.manual_seed(7)
    expected = vae.terms(x, 3).log_weights()
    torch.manual_seed(7)
    got = vae_terms_from_noise(vae, x, vae_noise(vae, x, 3)).log_weights()
    torch.testing.assert_close(got, expected)


def _grads(vae, loss):
    vae.zero_grad()
    loss.backward()
    return torch.cat([p.grad.flatten() for p in vae.parameters()])


def test_vr_max_single_gradient_is_the_max_samples_gradient():
    vae = tiny_vae(2)
    x = torch.rand(5, 6, dtype=torch.float64).round()
    torch.manual_seed(3)
    bound, _ = VRMaxSingle(n_samples=7)(vae, x)
    got = _grads(vae, bound.sum())
    torch.manual_seed(3)
    eps = vae_noise(vae, x, 7)
    log_w = vae_terms_from_noise(vae, x, eps).log_weights()  # full graph
    torch.testing.assert_close(bound, log_w.max(0).values.detach())
    expected = _grads(vae, log_w.max(0).values.sum())  # max back-propagates to the arg-max only
    torch.testing.assert_close(got, expected)


@pytest.mark.slow
def test_single_backward_iwae_gradient_equals_full_iwae_in_expectation():
    vae = tiny_vae(1, seed=1)
    x = torch.rand(1, 6, dtype=torch.float64).round().expand(4000, 6)  # 4,000 independent draws for one point
    torch.manual_seed(0)
    full = torch.stack([_grads(vae, -IWAE(n_samples=5)(vae, x)[0].mean()) for _ in range(3)])
    single = torch.stack([_grads(vae, -VRSingle(n_samples=5, alpha=0.0)(vae, x)[0].mean()) for _ in range(3)])
    full, single = full.mean(0), single.mean(0)
    scale = full.abs().max()
    assert (single - full).abs().max() < 0.08 * scale
    bound, _ = VRSingle(n_samples=5)(vae, x[:3])
    assert bound.shape == (3,)


@pytest.mark.parametrize("alpha", [-0.5, 0.0, 0.5, 1.0, 1.5])
def test_exact_renyi_between_gaussians_against_monte_carlo_with_large_k(alpha):
    from fyexp.experiments.vr_renyi_gaussians import exact_neg_renyi, mc_neg_renyi

    g = torch.Generator().manual_seed(0)
    est = mc_neg_renyi(alpha, 200_000, 4, [1.0, 1.0], [0.0, 0.0], g)
    exact = exact_neg_renyi(alpha, [1.0, 1.0], [0.0, 0.0])
    assert exact == pytest.approx(-alpha)  # ||Δμ||² = 2
    assert float(est.mean()) == pytest.approx(exact, abs=0.02)
    if alpha < 1:  # Theorem 2: the K = 1 estimate is -KL in expectation, below the exact value for α < 1
        small = mc_neg_renyi(alpha, 1, 20_000, [1.0, 1.0], [0.0, 0.0], g)
        assert float(small.mean()) == pytest.approx(-1.0, abs=0.05)


def test_cross_validation_folds_partition_frey_face_exactly():
    from fyexp.data.freyface import cv_folds, fold_split

    folds = cv_folds(1965, 10, seed=0)
    joined = np.concatenate(folds)
    assert len(folds) == 10 and sorted(joined.tolist()) == list(range(1965))
    assert {len(f) for f in folds} == {196, 197}
    data = torch.arange(1965, dtype=torch.float32).unsqueeze(1)
    train, test = fold_split(data, 3)
    assert sorted(torch.cat([train, test]).squeeze(1).long().tolist()) == list(range(1965))
    assert set(test.squeeze(1).long().tolist()) == set(folds[3].tolist())


def test_data_errors_are_one_line_naming_the_file(tmp_path):
    from fyexp.data.caltech import load_caltech
    from fyexp.data.freyface import load_freyface
    from fyexp.core.errors import FyexpError

    with pytest.raises(FyexpError, match=r"FreyFace/freyfaces\.pkl: absent"):
        load_freyface(str(tmp_path))
    with pytest.raises(FyexpError, match=r"caltech101_silhouettes_28_split1\.mat: absent"):
        load_caltech(str(tmp_path))
    (tmp_path / "FreyFace").mkdir()
    (tmp_path / "FreyFace" / "freyfaces.pkl").write_bytes(b"not a pickle")
    with pytest.raises(FyexpError, match=r"freyfaces\.pkl: not a pickled") as err:
        load_freyface(str(tmp_path))
    assert "\n" not in str(err.value)


@pytest.mark.slow
def test_frey_face_cell_end_to_end_on_synthetic_faces(tmp_path):
    import pickle

    from fyexp.experiments.base import RunContext
    from fyexp.experiments.vr_vae import VRVAE, Config, Grid
    from fyexp.store.results import Cell
    from fyexp.train import OptimizerConfig, TrainConfig

    (tmp_path / "FreyFace").mkdir()
    faces = np.random.default_rng(0).integers(0, 256, size=(40, 560), dtype=np.uint8)
    with open(tmp_path / "FreyFace" / "freyfaces.pkl", "wb") as handle:
        pickle.dump([faces], handle)
    grid = Grid(include=[{"dataset": "freyface", "L": 1, "K": 5, "method": ["vae", "vr_max"], "fold": 0}])
    config = Config(grid=grid, n_folds=4, test_samples=20, test_chunk=10,
                    train_freyface=TrainConfig(epochs=1, batch_size=10, optimizer=OptimizerConfig(lr=1e-3)),
                    bias_points=5, bias_samples=[5], bias_repetitions=2)
    ctx = RunContext("vr-vae", "test", "cpu", tmp_path, tmp_path / "work", tmp_path / "art")
    rows = VRVAE().run_cell(config, Cell("vae", 0, {"dataset": "freyface", "L": 1, "K": 5, "fold": 0}), ctx)
    ll = [r for r in rows if r["metric"] == "test_loglik"]
    assert len(ll) == 1 and ll[0]["setting"] == "Frey Face L=1 K=5" and ll[0]["paper_row"] == "VAE"
    assert math.isfinite(ll[0]["value"])
    bias = {r["alpha"]: r["value"] for r in rows if r["metric"] == "bias_mean"}
    assert sorted(bias) == [-500.0, -50.0, -5.0, -1.0, 0.0]
    rows = VRVAE().run_cell(config, Cell("vr_max", 0, {"dataset": "freyface", "L": 1, "K": 5, "fold": 0}), ctx)
    saved = np.load(next((tmp_path / "art").glob("samples-vr_max*.npz")))
    assert saved["images"].shape == (config.n_figure_samples, 560) and tuple(saved["shape"]) == (28, 20)


@pytest.mark.slow
def test_stopping_epoch_on_held_out_images_is_the_argmax_of_the_validation_bound(tmp_path, monkeypatch):
    """`validation: {freyface: n}` holds out the training part's last n images; the cell reports the VI bound on
    them every `valid_every` epochs and its argmax epoch (VR §5.1: stopping epochs tuned on the VI setting)."""
    import pickle

    from fyexp.core.errors import ConfigValueError
    from fyexp.experiments import vr_vae
    from fyexp.experiments.base import RunContext
    from fyexp.store.results import Cell
    from fyexp.train import OptimizerConfig, TrainConfig

    (tmp_path / "FreyFace").mkdir()
    faces = np.random.default_rng(0).integers(0, 256, size=(40, 560), dtype=np.uint8)
    with open(tmp_path / "FreyFace" / "freyfaces.pkl", "wb") as handle:
        pickle.dump([faces], handle)
    grid = vr_vae.Grid(include=[{"dataset": "freyface", "L": 1, "K": 5, "method": "vae", "fold": 0}])
    config = vr_vae.Config(grid=grid, n_folds=4, test_samples=10, test_chunk=10,
                           train_freyface=TrainConfig(epochs=6, batch_size=10, optimizer=OptimizerConfig(lr=1e-3)),
                           validation={"freyface": 8}, valid_every=2, bias_points=2, bias_samples=[5],
                           bias_repetitions=2)
    seen = {}
    real_fit = vr_vae.Trainer.fit

    def spy(self, task, data):
        seen["train"], seen["valid"] = len(data[0]), len(task.valid)
        return real_fit(self, task, data)

    monkeypatch.setattr(vr_vae.Trainer, "fit", spy)
    ctx = RunContext("vr-vae", "test", "cpu", tmp_path, tmp_path / "work", tmp_path / "art")
    rows = vr_vae.VRVAE().run_cell(config, Cell("vae", 0, {"dataset": "freyface", "L": 1, "K": 5, "fold": 0}), ctx)
    assert seen == {"train": 30 - 8, "valid": 8}  # fold 0 of 4 leaves 30 training faces, the last 8 held out
    curve = {r["epoch"]: r["value"] for r in rows if r["metric"] == "valid_bound"}
    assert sorted(curve) == [2, 4, 6]
    best = next(r["value"] for r in rows if r["metric"] == "best_epoch")
    assert best == max(curve, key=curve.get)
    assert next(r["value"] for r in rows if r["metric"] == "best_valid_bound") == max(curve.values())
    with pytest.raises(ConfigValueError, match="validation"):
        vr_vae.Config(validation={"omniglot": 5})


@pytest.mark.parametrize("change, expected", [({"dataset": "omniglot"}, "data sets among"),
                                              ({"L": 2}, "2 for MNIST only"),
                                              ({"dataset": "mnist", "method": "vr_min"}, "methods among"),
                                              ({"dataset": "mnist"}, "a fold for Frey Face only"),
                                              ({"fold": None}, "a fold for Frey Face only")])
def test_a_bad_grid_entry_is_a_one_line_error(change, expected):
    from fyexp.core.errors import ConfigValueError
    from fyexp.experiments.vr_vae import Config, Grid

    entry = {"dataset": "freyface", "L": 1, "K": 5, "method": "vae", "fold": 0, **change}
    with pytest.raises(ConfigValueError, match=expected):
        Config(grid=Grid(include=[entry]))
    with pytest.raises(ConfigValueError, match="folds in 0..3"):
        Config(n_folds=4, grid=Grid(include=[{"dataset": "freyface", "L": 1, "K": 5, "method": "vae", "fold": 7}]))


def _iwae_code_cell(config, dataset="caltech", method="vae", layers=1):
    from fyexp.data.vr_images import VRData
    from fyexp.experiments.vr_vae import VRVAE
    from fyexp.store.results import Cell

    width = 560 if dataset == "freyface" else 784
    data = VRData(train=torch.rand(30, width), test=torch.rand(5, width), binarize=dataset != "freyface")
    params = {"dataset": dataset, "L": layers, "K": 5, **({"fold": 0} if dataset == "freyface" else {})}
    cell = Cell(method, 0, params)
    return VRVAE()._task(config, cell, data), VRVAE.cell_config(config, cell)


def test_the_vae_on_caltech_and_mnist_trains_the_monte_carlo_kl_where_the_spec_says_so():
    """``elbo: {caltech: mc, mnist: mc}`` (``paper``: the IWAE code's VAE, (1/K) sum_k log w_k): the cell's
    ELBO is the Monte Carlo one there, the analytic one on a data set without an entry; only the VAE changes; the
    entry is scoped to its data set, and a cell of a data set without one keeps the settings it had before the key
    existed (no ``elbo`` in its settings: its hash unchanged)."""
    from fyexp.experiments.vr_vae import Config
    from fyexp.objectives import ELBO

    config = Config(elbo={"caltech": "mc"})
    task, scoped = _iwae_code_cell(config, "caltech")
    assert task.objective == ELBO(n_samples=5, analytic=False) and scoped["elbo"] == {"caltech": "mc"}
    task, scoped = _iwae_code_cell(config, "mnist")
    assert task.objective == ELBO(n_samples=5, analytic=True) and "elbo" not in scoped
    task, scoped = _iwae_code_cell(Config(elbo={"caltech": "analytic"}), "caltech")
    assert task.objective == ELBO(n_samples=5) and "elbo" not in scoped   # analytic is the same as no entry
    assert _iwae_code_cell(Config(elbo={"mnist": "mc"}), "mnist")[0].objective == ELBO(n_samples=5, analytic=False)
    assert isinstance(_iwae_code_cell(config, "caltech", "iwae")[0].objective, IWAE)
    assert "elbo" not in _iwae_code_cell(Config(elbo={"caltech": "mc", "mnist": "mc"}), "freyface")[1]
    assert _iwae_code_cell(Config(), "caltech")[1] == {k: v for k, v in _iwae_code_cell(
        Config(elbo={"mnist": "mc"}), "caltech")[1].items()}


def test_the_paper_profile_trains_caltech_and_mnist_as_the_iwae_code_does():
    """``paper``: the IWAE code's Adam (``adam_iwae``) and the VAE's Monte Carlo KL on Caltech and MNIST; Frey Face
    keeps its own protocol (torch's Adam on the authors' vae_autograd settings)."""
    from fyexp.experiments import get_experiment
    from fyexp.spec.specs import load_spec, resolve

    spec = load_spec("vr-vae")
    config = resolve(spec, "paper", get_experiment(spec.runner).Config, seeds=[0]).config
    assert (config.train_caltech.optimizer.name, config.train_mnist.optimizer.name) == ("adam_iwae", "adam_iwae")
    assert config.train_freyface.optimizer.name == "adam" and config.freyface.elbo == "mc"
    assert config.elbo == {"caltech": "mc", "mnist": "mc"}


@pytest.mark.parametrize("elbo", [{"freyface": "mc"}, {"caltech": "exact"}])
def test_a_bad_elbo_entry_is_a_one_line_error_naming_the_key(elbo, tmp_path):
    from pathlib import Path

    from fyexp.core.errors import FyexpError
    from fyexp.experiments.vr_vae import Config
    from fyexp.spec.specs import build_config

    with pytest.raises(FyexpError, match="elbo") as error:
        build_config(Config, {"elbo": elbo}, Path("vr-vae.yaml"), "defaults")
    assert "\n" not in str(error.value)
