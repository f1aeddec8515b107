"""FY β-VAE end to end on tiny synthetic images (no data files needed), and the objective's pieces."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest
import torch

from fyexp.data.vision import ImageSplits
from fyexp.experiments import fy_vae
from fyexp.experiments.base import RunContext
from fyexp.models.fy_vae import build_fy_vae
from fyexp.objectives import ELBO
from fyexp.report.figures import FigureContext, draw_figures
from fyexp.store.results import ResultStore
from fyexp.spec.specs import build_config


def _synthetic(name, data_dir, n_train, n_valid, n_test=None):
    """Blurry random strokes in [0, 1]: enough structure for a few steps of training."""
    g = torch.Generator().manual_seed(0)
    images = (torch.rand(n_train + n_valid + 40, 784, generator=g) > 0.8).float() * torch.rand(1, 784, generator=g)
    return ImageSplits(train=images[:n_train], valid=images[n_train:n_train + n_valid], test=images[-40:][:n_test])


@pytest.fixture
def tiny(monkeypatch):
    monkeypatch.setattr(fy_vae, "image_splits", _synthetic)
    return build_config(fy_vae.Config, {"grid": {"dataset": ["MNIST"]}, "n_train": 96, "n_valid": 16, "n_test": 40,
                                        "train": {"epochs": 2, "batch_size": 32, "optimizer": {"lr": 1e-3}}, "hidden": 16, "latent": 4,
                                        "n_prior_samples": 4, "n_reconstructions": 3}, "tiny.yaml", "profiles.tiny")


def _ctx(tmp_path, cell):
    store = ResultStore(tmp_path, "fy-vae")
    return store, RunContext(experiment="fy-vae", profile="tiny", device="cpu", data_dir=None,
                             work_dir=store.work_dir("tiny", cell), artifact_dir=store.artifact_dir("tiny"))


def test_grid_has_authors_variant_for_beta_gaussians_only(tiny):
    cells = fy_vae.FYVAE().cells(tiny, (0, 1))
    assert len(cells) == 1 * 2 * (3 + 2) * 2
    assert not [c for c in cells if c.params["regularizer"] == "authors" and c.params["latent_rho"] == 1.0]
    assert len({c.key for c in cells}) == len(cells)


@pytest.mark.slow
def test_end_to_end_rows_artifacts_and_figures(tiny, tmp_path):
    exp = fy_vae.FYVAE()
    chosen = [c for c in exp.cells(tiny, (0,)) if c.params["latent_rho"] == 2.0 and c.params["obs_rho"] == 2.0]
    for cell in chosen:
        store, ctx = _ctx(tmp_path, cell)
        rows = exp.run_cell(tiny, cell, ctx)
        store.write_cell("tiny", cell, rows, {"status": "ok"})
        by_metric = {r["metric"]: r for r in rows}
        l1 = by_metric["l1_reconstruction_error"]
        assert 0 < l1["value"] < 784 and l1["table"] == "2" and l1["setting"] == "MNIST"
        if cell.params["regularizer"] == "fy":
            assert l1["paper_row"] == "Psi_2 sparse binary rho'=2 / Epanechnikov rho=2"
        else:
            assert l1["paper_row"] == "" and "[authors' regularizer]" in l1["label"]
        assert {"l1_reconstruction_error_mode", "l1_reconstruction_error_gaussian_sample"} <= set(by_metric)
        assert (ctx.work_dir / "metrics.csv").is_file()
        assert (ctx.artifact_dir / f"{cell.key}.npz").is_file()
    frame = store.consolidate()
    ctx = FigureContext("fy-vae", frame, store.folder, load=lambda name: frame)
    paths = draw_figures((("vae-prior-samples", {}), ("vae-reconstructions", {})), ctx)
    assert {p.name for p in paths} == {"samples-MNIST-tiny.png", "reconstructions-MNIST-tiny.png"}


@pytest.mark.slow
def test_same_seed_same_numbers_and_training_lowers_the_loss(tiny, tmp_path):
    exp = fy_vae.FYVAE()
    cell = exp.cells(tiny, (3,))[0]
    first = exp.run_cell(tiny, cell, _ctx(tmp_path / "a", cell)[1])
    second = exp.run_cell(tiny, cell, _ctx(tmp_path / "b", cell)[1])
    assert pd.DataFrame(first)["value"].tolist()[:3] == pd.DataFrame(second)["value"].tolist()[:3]
    history = pd.read_csv(_ctx(tmp_path / "a", cell)[1].work_dir / "metrics.csv")
    assert history["train_loss"].iloc[-1] < history["train_loss"].iloc[0]


def test_a_diverged_cell_is_measured_at_its_last_finite_epoch_and_says_so(tiny, tmp_path, monkeypatch):
    """The authors' script tests its last checkpoint from before a divergence (the runner's docstring): a cell
    whose training loss turns NaN in epoch 3 (3 steps an epoch) is measured at the end of epoch 2 — the same rows as
    a 2-epoch run of it — and carries ``diverged_in_epoch`` = 3 under the table's keys; a finite run carries none."""
    class DivergesAfterSixSteps(ELBO):
        calls = 0

        def __call__(self, model, x):
            bound, parts = super().__call__(model, x)
            DivergesAfterSixSteps.calls += 1
            return (bound * float("nan"), parts) if DivergesAfterSixSteps.calls > 6 else (bound, parts)

    exp = fy_vae.FYVAE()
    cell = exp.cells(tiny, (0,))[0]
    finite = {r["metric"]: r for r in exp.run_cell(tiny, cell, _ctx(tmp_path / "finite", cell)[1])}
    assert "diverged_in_epoch" not in finite
    monkeypatch.setattr(fy_vae, "ELBO", DivergesAfterSixSteps)
    longer = dataclasses.replace(tiny, train=dataclasses.replace(tiny.train, epochs=4))
    rows = {r["metric"]: r for r in exp.run_cell(longer, cell, _ctx(tmp_path / "diverged", cell)[1])}
    assert rows["diverged_in_epoch"]["value"] == 3
    assert rows["diverged_in_epoch"]["table"] == "2" and rows["diverged_in_epoch"]["setting"] == "MNIST"
    for name in ("l1_reconstruction_error", "l1_reconstruction_error_mode", "final_train_loss"):
        assert rows[name]["value"] == finite[name]["value"], name


def test_objective_at_rho_one_is_the_negative_elbo_up_to_a_constant(tiny):
    """Bernoulli/Gaussian, β = 1: −bound = BCE + KL − H(x), the classic VAE objective."""
    torch.manual_seed(0)
    model = build_fy_vae(784, tiny.hidden, tiny.latent, 1.0, 1.0, "fy")
    x = torch.rand(5, 784)
    torch.manual_seed(1)
    bound, _ = ELBO(beta=1.0)(model, x)
    torch.manual_seed(1)
    mu, log_var = model.encoder(x)
    z = mu + (0.5 * log_var).exp() * torch.randn_like(mu)
    bce = torch.nn.functional.binary_cross_entropy_with_logits(model.decoder(z), x, reduction="none").sum(-1)
    entropy_x = -(torch.xlogy(x, x) + torch.xlogy(1 - x, 1 - x)).sum(-1)
    kl = 0.5 * (mu ** 2 + log_var.exp() - 1 - log_var).sum(-1)
    assert torch.allclose(-bound, bce - entropy_x + kl, atol=1e-3)


def test_l1_errors_at_a_posterior_sample_the_mode_and_the_authors_gaussian_sample():
    """fyexp.metrics.reconstruction.l1_errors: Σ_d |x − E[x | z]| per image at z ∼ q, z = mode, z = μ + σ ε."""
    from fyexp.metrics.reconstruction import l1_errors

    torch.manual_seed(0)
    model = build_fy_vae(784, 16, 4, 2.0, 1.0, "fy")
    x = (torch.rand(7, 784) > 0.7).float()
    torch.manual_seed(5)
    errors = l1_errors(model, x, chunk=3)
    assert {k: v.shape for k, v in errors.items()} == {k: (7,) for k in ("sample", "mode", "gaussian_sample")}
    with torch.no_grad():
        l1 = lambda z: (x - model.observation.mean(model.decode(z))).abs().sum(-1)  # noqa: E731
        q = model.posterior(x)
        assert torch.allclose(errors["mode"], l1(q.mode))
        torch.manual_seed(5)
        z = {"sample": [], "gaussian": []}
        for rows in range(0, 7, 3):   # the draws, chunk by chunk, in l1_errors' order
            qc = model.posterior(x[rows:rows + 3])
            z["sample"].append(qc.rsample())
            z["gaussian"].append(qc.loc + qc.scale * torch.randn_like(qc.loc))
        assert torch.allclose(errors["sample"], l1(torch.cat(z["sample"])))
        assert torch.allclose(errors["gaussian_sample"], l1(torch.cat(z["gaussian"])))
    assert not torch.allclose(errors["sample"], errors["gaussian_sample"])  # a 2-Gaussian sample is not μ + σ ε
