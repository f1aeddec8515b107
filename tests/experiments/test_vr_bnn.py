"""Batched Bayesian neural nets of vr-bnn: the network, q and prior densities, eq. 23, the metrics in original
units, per-model α, and the batched run equal to training a split alone."""

import math

import numpy as np
import pytest
import torch
from torch.distributions import Normal

from fyexp.data.uci import standardize
from fyexp.core.errors import CellSkipped, FyexpError
from fyexp.experiments.base import RunContext
from fyexp.experiments.vr_bnn import METHOD_CODES, METHODS, VRBNN, Config
from fyexp.experiments.vr_bnn_config import Grid
from fyexp.models.bnn import BatchedBNN, RegressionBatch, predictive_metrics
from tests.data.test_uci import make_uci
from fyexp.objectives import minibatch_log_weights, vr_bound
from fyexp.objectives.per_column import PerColumnVR
from fyexp.models.latent import LatentTerms
from fyexp.store.results import Cell
from fyexp.train import OptimizerConfig, TrainConfig
from fyexp.train.batched_bnn import fit_group


def small_bnn(n_models=3, d=2, h=4, seed=0):
    model = BatchedBNN([torch.Generator().manual_seed(seed + m) for m in range(n_models)], d, h, init_log_var=-2.0)
    return model.double()


def test_predict_matches_a_loop_over_models_and_samples():
    model = small_bnn()
    w = model.sample(5)
    x = torch.randn(3, 7, 2, dtype=torch.float64)
    f = model.predict(w.theta, x)
    d, h = 2, 4
    for m in range(3):
        for k in range(5):
            t = w.theta[m, :, k]
            w1, b1, w2, b2 = t[:d * h].reshape(d, h), t[d * h:d * h + h], t[d * h + h:d * h + 2 * h], t[-1]
            expected = torch.relu(x[m] @ w1 + b1) @ w2 + b2
            torch.testing.assert_close(f[m, k], expected)


def test_log_prior_and_log_q_match_torch_distributions():
    model = small_bnn()
    w = model.sample(4)
    prior = Normal(0.0, math.sqrt(model.prior_var)).log_prob(w.theta).sum(1)
    q = Normal(w.mean.unsqueeze(-1), w.std.unsqueeze(-1)).log_prob(w.theta).sum(1)
    torch.testing.assert_close(model.log_prior(w), prior)
    torch.testing.assert_close(model.log_q(w), q)
    mean, var = model.q_params()
    kl = torch.distributions.kl_divergence(Normal(mean, var.sqrt()), Normal(0.0, 1.0)).sum(-1)
    torch.testing.assert_close(model.kl(mean, var), kl)


def test_log_weights_are_the_minibatch_bound_of_eq_23():
    model = small_bnn(n_models=2)
    x, y = torch.randn(2, 6, 2, dtype=torch.float64), torch.randn(2, 6, dtype=torch.float64)
    n_data = torch.tensor([50, 80])
    state = [g.get_state() for g in model.generators]
    terms = model.terms(RegressionBatch(x, y, n_data), 3)
    for g, s in zip(model.generators, state):
        g.set_state(s)
    w = model.sample(3)
    f = model.predict(w.theta, x)
    per_point = Normal(f, model.noise_var().sqrt()[:, None, None]).log_prob(y.unsqueeze(1))  # (M, K, B)
    for m in range(2):
        expected = minibatch_log_weights(model.log_prior(w)[m], per_point[m], model.log_q(w)[m], int(n_data[m]))
        torch.testing.assert_close(terms.log_weights()[:, m], expected)


def test_test_loglik_and_rmse_in_original_units_by_hand():
    f = torch.tensor([[[0.0, 1.0], [2.0, -1.0]]], dtype=torch.float64)  # (M=1, K=2, N=2), standardized units
    noise_var = torch.tensor([0.25], dtype=torch.float64)
    y = torch.tensor([[11.0, 9.0]], dtype=torch.float64)
    y_mean, y_std = torch.tensor([10.0], dtype=torch.float64), torch.tensor([2.0], dtype=torch.float64)
    ll, rmse = predictive_metrics(f, noise_var, y, y_mean, y_std)
    sd = 0.5 * 2.0  # σ s_y
    pred = np.array([[10.0, 12.0], [14.0, 8.0]])  # [k][n] = f s_y + μ_y
    dens = lambda v, mu: math.exp(-0.5 * ((v - mu) / sd) ** 2) / (sd * math.sqrt(2 * math.pi))
    by_hand = np.mean([math.log(0.5 * (dens(11.0, pred[0, 0]) + dens(11.0, pred[1, 0]))),
                       math.log(0.5 * (dens(9.0, pred[0, 1]) + dens(9.0, pred[1, 1])))])
    assert float(ll[0]) == pytest.approx(by_hand, rel=1e-12)
    mean_pred = pred.mean(0)  # [12, 10]
    assert float(rmse[0]) == pytest.approx(math.sqrt(((11 - 12) ** 2 + (9 - 10) ** 2) / 2), rel=1e-12)
    assert mean_pred.tolist() == [12.0, 10.0]


def test_per_column_vr_gives_each_column_its_own_bound_and_gradient():
    log_w = torch.randn(6, 4, dtype=torch.float64, requires_grad=True)
    alphas = (1.0, 0.5, 0.0, -math.inf)
    terms = LatentTerms(log_w, torch.zeros_like(log_w), torch.zeros_like(log_w))
    bound = PerColumnVR(n_samples=6, alphas=alphas).bound(terms)
    for m, a in enumerate(alphas):
        torch.testing.assert_close(bound[m], vr_bound(log_w[:, m], a))
    grad, = torch.autograd.grad(bound[2], log_w, retain_graph=True)
    assert torch.all(grad[:, [0, 1, 3]] == 0)
    vr_max_grad, = torch.autograd.grad(bound[3], log_w)
    assert vr_max_grad[:, 3].tolist().count(1.0) == 1  # VR-max: the max sample only


def synthetic_splits(n_splits=2, n=24, n_test=6, d=3):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(n + n_test, d))
    y = x @ rng.normal(size=d) + 0.3 * rng.normal(size=n + n_test) + 5
    out = []
    for s in range(n_splits):
        perm = np.random.default_rng(10 + s).permutation(n + n_test)
        tr, te = perm[:n], perm[n:]
        out.append((s, standardize(x[tr], y[tr], x[te], y[te])))
    return out


def test_batched_grid_equals_training_one_split_and_method_alone():
    train = TrainConfig(epochs=3, batch_size=8, optimizer=OptimizerConfig(lr=1e-2))
    splits = synthetic_splits()
    methods = ["VI", "VR-0.0", "VR-max"]
    kwargs = dict(hidden=5, n_samples=4, train=train, seed=3)
    method = {m: (METHOD_CODES[m], METHODS[m]) for m in methods}
    together = fit_group(splits, [method[m] for m in methods], **kwargs)
    alone = fit_group([splits[1]], [method["VR-max"]], **kwargs)
    a = methods.index("VR-max")
    np.testing.assert_allclose(alone.test_loglik[0, 0], together.test_loglik[a, 1], rtol=1e-5)
    np.testing.assert_allclose(alone.test_rmse[0, 0], together.test_rmse[a, 1], rtol=1e-5)
    alone_vi = fit_group([splits[0]], [method["VI"]], **kwargs)
    np.testing.assert_allclose(alone_vi.test_loglik[0, 0], together.test_loglik[0, 0], rtol=1e-5)
    assert len({float(v) for v in together.test_loglik.ravel()}) == 6  # the models differ


def test_missing_year_is_not_run_data_missing(tmp_path):
    ctx = RunContext("vr-bnn", "quick", "cpu", tmp_path, tmp_path / "w", tmp_path / "a")
    with pytest.raises(CellSkipped, match=r"^data missing .*UCI/year-prediction-MSD"):
        VRBNN().run_cell(Config(), Cell("bnn", 0, {"dataset": "year"}), ctx)


def test_model_chunks_give_the_same_network_outputs():
    model = small_bnn(n_models=6)
    w = model.sample(3)
    x = torch.randn(3, 5, 2, dtype=torch.float64)
    whole = model.predict(w.theta, x)
    model.model_chunk = 4
    torch.testing.assert_close(model.predict(w.theta, x), whole)


@pytest.mark.parametrize("asked, ran", [(500, [0, 1]), (2, [0, 1]), (1, [0]), (None, [0, 1])])
def test_n_splits_takes_the_first_splits_and_all_of_a_data_set_with_fewer(tmp_path, asked, ran):
    """A profile's 5 splits are Year's one: ``n_splits`` is a cap, never an error (the rows say which splits ran)."""
    make_uci(tmp_path, n_splits=2)
    ctx = RunContext("vr-bnn", "quick", "cpu", tmp_path, tmp_path / "w", tmp_path / "a")
    config = Config(n_splits=asked, epochs=1, n_samples=2, hidden=3, methods=["VI"])
    rows = VRBNN().run_cell(config, Cell("bnn", 0, {"dataset": "boston"}), ctx)
    assert sorted({r["split"] for r in rows if r["metric"] == "test_loglik"}) == ran


def test_grid_cells_and_settings_as_before_the_grid_was_declared():
    """One cell per data set of the grid; a spec's old ``datasets`` list is that grid; a cell's settings are the JSON
    of the old Config (its data sets listed as ``datasets``), so committed cells keep their settings hash."""
    from fyexp.spec.settings import scoped_config

    config = Config(grid=Grid(dataset=["yacht", "boston"]), n_splits=2)
    cells = VRBNN().cells(config, (0, 1))
    assert [c.key for c in cells] == ["bnn__dataset=yacht__seed=0", "bnn__dataset=yacht__seed=1",
                                      "bnn__dataset=boston__seed=0", "bnn__dataset=boston__seed=1"]
    old = Config(datasets=["yacht", "boston"], n_splits=2)
    assert [c.key for c in VRBNN().cells(old, (0, 1))] == [c.key for c in cells]
    settings = scoped_config(VRBNN(), config, cells[0])
    assert settings == scoped_config(VRBNN(), old, cells[0])
    assert settings["datasets"] == ["yacht", "boston"] and "grid" not in settings and settings["n_splits"] == 2


def test_rows_carry_each_methods_paper_keys(tmp_path):
    """test_loglik rows are Table 2, test_rmse Table 3, each with its method as the paper row."""
    make_uci(tmp_path, n_splits=2)
    ctx = RunContext("vr-bnn", "quick", "cpu", tmp_path, tmp_path / "w", tmp_path / "a")
    config = Config(methods=["VI", "VR-max"], n_splits=2, n_samples=3, epochs=1, hidden=4)
    rows = VRBNN().run_cell(config, Cell("bnn", 0, {"dataset": "boston"}), ctx)
    keyed = {(r["metric"], r["paper_row"], r["split"]): r for r in rows if r.get("paper") == "vr"}
    assert sorted(keyed) == sorted((m, a, s) for m in ("test_loglik", "test_rmse") for a in ("VI", "VR-max")
                                   for s in (0, 1))
    assert {r["table"] for (m, *_), r in keyed.items() if m == "test_loglik"} == {"2"}
    assert {r["table"] for (m, *_), r in keyed.items() if m == "test_rmse"} == {"3"}
    assert all(r["setting"] == rows[-1]["setting"] for r in rows) and rows[-1]["metric"] == "train_time_s"
