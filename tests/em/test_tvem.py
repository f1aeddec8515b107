"""Truncated variational EM for binary sparse coding (Lücke 2019, Alg. 1): the BSC log-joint against a direct
density, exactness at |K| = 2^H, monotone free energy, Prop. 6, the M-step against a numerical maximum of Q, the
state search, Figure 1, and the bars test on the quick profile."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats
from typer.testing import CliRunner

from fyexp.cli.app import app
from fyexp.data.bars import BarsSpec, bars_dictionary, make_bars, match_fields
from fyexp.em.bsc import BSCParams, all_states, init_params, log_joint, m_step, q_function, sample_data
from fyexp.em.tvem import (TVEM, StateSearch, free_energy, init_states, keep_top, log_likelihood, merge, propose,
                           state_codes, truncated_posterior)
from fyexp.core.errors import ConfigValueError
from fyexp.experiments import RunContext
from fyexp.experiments.tvem_bsc import TVEMBSC, TVEMBSCConfig
from fyexp.report.figures.tvem import figure1_data
from fyexp.store.results import Cell

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


def random_model(seed: int, n_observed: int = 6, n_latents: int = 4, n_points: int = 40):
    rng = np.random.default_rng(seed)
    params = BSCParams(W=rng.normal(0, 2, (n_observed, n_latents)), sigma2=float(rng.uniform(0.5, 2)),
                       pi=float(rng.uniform(0.15, 0.5)))
    Y, _ = sample_data(params, n_points, rng)
    return params, Y, rng


# the model ---------------------------------------------------------------------------------------------------------
def test_log_joint_is_bernoulli_prior_times_gaussian():
    params, Y, _ = random_model(0)
    S = all_states(params.n_latents)
    direct = np.array([[stats.bernoulli.logpmf(s, params.pi).sum()
                        + stats.multivariate_normal.logpdf(y, params.W @ s, params.sigma2 * np.eye(len(y)))
                        for s in S] for y in Y[:5]])
    np.testing.assert_allclose(log_joint(Y[:5], S, params), direct, rtol=1e-12, atol=1e-10)
    per_point = np.broadcast_to(S, (5, *S.shape))  # the same states laid out per data point
    np.testing.assert_allclose(log_joint(Y[:5], per_point, params), direct, rtol=1e-12, atol=1e-10)


def test_all_states_enumerates_the_cube():
    S = all_states(5)
    assert S.shape == (32, 5) and len({tuple(s) for s in S}) == 32
    np.testing.assert_array_equal(state_codes(S), np.arange(32))


# exactness at |K| = 2^H ----------------------------------------------------------------------------------------------
def test_full_state_sets_give_the_exact_posterior_and_exact_em():
    params, Y, rng = random_model(1)
    n_latents = params.n_latents
    exact_joint = log_joint(Y, all_states(n_latents), params)
    exact_posterior = np.exp(exact_joint - np.logaddexp.reduce(exact_joint, axis=1, keepdims=True))
    K = init_states(len(Y), n_latents, 2 ** n_latents, rng)  # every state, a random order per point
    assert (np.sort(state_codes(K), axis=1) == np.arange(2 ** n_latents)).all()
    q, _ = truncated_posterior(log_joint(Y, K, params))
    order = np.argsort(state_codes(K), axis=1)
    np.testing.assert_allclose(np.take_along_axis(q, order, axis=1), exact_posterior, atol=1e-13)
    assert free_energy(log_joint(Y, K, params)) == pytest.approx(log_likelihood(Y, params), rel=1e-13)

    init = BSCParams(W=params.W + rng.normal(0, 1, params.W.shape), sigma2=3.0, pi=0.3)
    tv = TVEM(2 ** n_latents, StateSearch(3, 3), n_iter=15).fit(Y, init, rng, states=K)
    exact = TVEM(None, n_iter=15).fit(Y, init, rng)
    np.testing.assert_allclose(tv.params.W, exact.params.W, rtol=1e-9, atol=1e-10)
    assert tv.params.sigma2 == pytest.approx(exact.params.sigma2, rel=1e-10)
    assert tv.params.pi == pytest.approx(exact.params.pi, rel=1e-10)
    np.testing.assert_allclose(tv.free_energy, exact.free_energy, rtol=1e-11)
    assert (tv.accepted == 0).all()  # nothing to add to a complete set
    # exact EM's free energy is the log-likelihood
    assert exact.free_energy[-1] == pytest.approx(log_likelihood(Y, exact.params), rel=1e-12)


# monotone free energy -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("n_states", [1, 3, 8])
def test_free_energy_never_decreases(seed, n_states):
    params, Y, rng = random_model(10 + seed, n_observed=8, n_latents=6, n_points=60)
    init = init_params(Y, params.n_latents, rng)
    result = TVEM(n_states, StateSearch(4, 4), n_iter=25).fit(Y, init, rng)
    # F(K_0, Θ_0) <= F(K_1, Θ_0) <= F(K_1, Θ_1) <= F(K_2, Θ_1) <= ...
    half_steps = np.ravel(np.column_stack([result.free_energy_estep, result.free_energy[1:]]))
    sequence = np.concatenate([[result.free_energy[0]], half_steps])
    assert (np.diff(sequence) >= -1e-9 * np.abs(sequence[1:])).all()
    assert sequence[-1] > sequence[0] + 1.0  # and it does learn
    assert result.free_energy[-1] <= log_likelihood(Y, result.params) + 1e-9  # eq. 18 lower-bounds eq. 2


# Proposition 6 -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(5))
def test_replacing_a_state_raises_free_energy_iff_its_joint_is_higher(seed):
    params, Y, rng = random_model(20 + seed, n_latents=5, n_points=30)
    params = BSCParams(W=params.W / 4, sigma2=4.0, pi=params.pi)  # joints within a few nats: no float ties
    K = init_states(len(Y), params.n_latents, 4, rng)
    codes = state_codes(K)
    base = np.log(np.exp(log_joint(Y, K, params)).sum(axis=1))  # eq. 18, term by term
    candidates = all_states(params.n_latents)
    checked = 0
    for _ in range(200):
        n, slot = rng.integers(len(Y)), rng.integers(K.shape[1])
        new = candidates[rng.integers(len(candidates))]
        if state_codes(new) in codes[n]:
            continue
        replaced = K[n].copy()
        replaced[slot] = new
        new_term = np.log(np.exp(log_joint(Y[n:n + 1], replaced[None], params)).sum())
        higher_joint = log_joint(Y[n:n + 1], new[None], params)[0, 0] > log_joint(Y[n:n + 1], K[n, slot][None], params)[0, 0]
        assert (new_term > base[n]) == higher_joint and new_term != base[n]
        checked += 1
    assert checked > 100


@pytest.mark.parametrize("seed", range(3))
def test_merge_keeps_the_best_distinct_states(seed):
    params, Y, rng = random_model(30 + seed, n_latents=5, n_points=25)
    K = init_states(len(Y), params.n_latents, 6, rng)
    proposals = np.concatenate([propose(K, params.pi, 5, 5, rng), K[:, :2]], axis=1)  # some repeats on purpose
    joint = log_joint(Y, K, params)
    new_K, new_joint, replaced = merge(K, joint, proposals, log_joint(Y, proposals, params))
    codes = state_codes(new_K)
    assert all(len(set(row)) == K.shape[1] for row in codes)  # still sets
    np.testing.assert_allclose(new_joint, log_joint(Y, new_K, params))
    for n in range(len(Y)):  # brute force: the |K| largest joints among the distinct old and suggested states
        union = {int(c): s for c, s in zip(state_codes(np.concatenate([K[n], proposals[n]])),
                                           np.concatenate([K[n], proposals[n]]))}
        best = np.sort(log_joint(Y[n:n + 1], np.array(list(union.values())), params)[0])[::-1][:K.shape[1]]
        np.testing.assert_allclose(np.sort(new_joint[n])[::-1], best)
        assert replaced[n] == len(set(codes[n]) - set(state_codes(K[n])))
    assert free_energy(new_joint) >= free_energy(joint)


def test_proposals_are_prior_samples_and_one_bit_flips():
    rng = np.random.default_rng(0)
    K = init_states(50, 7, 3, rng)
    proposals = propose(K, 0.2, 4, 6, rng)
    assert proposals.shape == (50, 10, 7)
    flips = proposals[:, 4:]
    distance = np.abs(flips[:, :, None, :].astype(int) - K[:, None, :, :]).sum(axis=-1)
    assert (distance == 1).any(axis=2).all()  # each flip is one bit away from a state of its own set
    prior = propose(init_states(4000, 7, 1, rng), 0.2, 1, 0, rng)
    assert prior.mean() == pytest.approx(0.2, abs=0.01)


def test_init_states_are_distinct_per_point():
    rng = np.random.default_rng(0)
    for n_latents, n_states in [(3, 8), (4, 10), (10, 20), (20, 50)]:
        codes = state_codes(init_states(30, n_latents, n_states, rng))
        assert all(len(set(row)) == n_states for row in codes)


def test_keep_top_is_the_mixture_truncation():
    scores = np.log(np.random.default_rng(0).dirichlet(np.ones(6), size=10))
    q, log_z = truncated_posterior(keep_top(scores, 2))
    assert ((q > 0).sum(axis=1) == 2).all()
    top2 = np.sort(scores, axis=1)[:, -2:]
    np.testing.assert_allclose(log_z, np.logaddexp(top2[:, 0], top2[:, 1]))


# the M-step --------------------------------------------------------------------------------------------------------
def test_m_step_is_the_maximum_of_q():
    """Closed-form M-step against a numerical maximum of Q(Θ) (eq. 38) found by BFGS on finite differences."""
    params, Y, rng = random_model(40, n_observed=3, n_latents=2, n_points=20)
    K = init_states(len(Y), 2, 3, rng)
    q = rng.dirichlet(np.ones(3), size=len(Y))  # any weights on the states of each K(n)
    closed = m_step(Y, q, K, params)

    def unpack(x):
        return BSCParams(W=x[:6].reshape(3, 2), sigma2=float(np.exp(x[6])), pi=float(1 / (1 + np.exp(-x[7]))))

    start = np.concatenate([params.W.ravel(), [np.log(params.sigma2)], [0.0]])
    found = optimize.minimize(lambda x: -q_function(Y, q, K, unpack(x)), start, method="BFGS",
                              options={"gtol": 1e-9})
    numerical = unpack(found.x)
    np.testing.assert_allclose(closed.W, numerical.W, atol=1e-4)
    assert closed.sigma2 == pytest.approx(numerical.sigma2, rel=1e-4)
    assert closed.pi == pytest.approx(numerical.pi, abs=1e-5)
    assert q_function(Y, q, K, closed) >= -found.fun - 1e-8
    # and its gradient vanishes: central differences of Q at the closed form
    x0, eps = np.concatenate([closed.W.ravel(), [np.log(closed.sigma2)], [np.log(closed.pi / (1 - closed.pi))]]), 1e-5
    gradient = [(q_function(Y, q, K, unpack(x0 + eps * e)) - q_function(Y, q, K, unpack(x0 - eps * e))) / (2 * eps)
                for e in np.eye(8)]
    np.testing.assert_allclose(gradient, 0.0, atol=1e-5)


def test_dead_latent_keeps_its_field():
    params, Y, rng = random_model(41, n_latents=3)
    K = init_states(len(Y), 3, 2, rng)
    K[:, :, 2] = 0  # no state switches latent 3 on
    K[:, 1, 0] = 1 - K[:, 0, 0]  # keep the two states of each set distinct
    K[:, 1, 1] = K[:, 0, 1]
    updated = m_step(Y, truncated_posterior(log_joint(Y, K, params))[0], K, params)
    np.testing.assert_array_equal(updated.W[:, 2], params.W[:, 2])


# bars and Figure 1 ------------------------------------------------------------------------------------------------
def test_bars_data_and_matching():
    W = bars_dictionary(4, amplitude=10.0)
    assert W.shape == (16, 8) and (W.sum(axis=0) == 40).all()
    assert (np.linalg.matrix_rank(W) == 7)  # the horizontal and vertical bars both sum to the full image
    data = make_bars(BarsSpec(size=4, n_points=2000, seed=3))
    assert data.S.mean() == pytest.approx(2 / 8, abs=0.02)
    residual = data.Y - data.S @ W.T
    assert residual.std() == pytest.approx(2.0, rel=0.03)
    shuffled = W[:, ::-1] * 0.5
    index, cosine = match_fields(shuffled, W)
    np.testing.assert_array_equal(index, np.arange(8)[::-1])
    np.testing.assert_allclose(cosine, 1.0)


def test_figure1_truncation_keeps_the_three_most_probable_states(tmp_path):
    """The figure1 cell saves the image and log-joint; the report's series (:func:`figure1_data`) are the exact
    posterior and its truncation, and agree with the cell's rows."""
    ctx = RunContext("tvem-bsc", "test", "cpu", None, tmp_path / "work", tmp_path / "artifacts")
    rows = {r["metric"]: r["value"] for r in TVEMBSC().run_cell(TVEMBSCConfig(), Cell("figure1", 0), ctx)}
    figure = figure1_data(tmp_path / "artifacts")
    posterior, truncated = np.asarray(figure["posterior"]), np.asarray(figure["truncated"])
    assert posterior.sum() == pytest.approx(1.0) and truncated.sum() == pytest.approx(1.0)
    kept = truncated > 0
    assert kept.sum() == 3 and posterior[kept].min() > posterior[~kept].max()
    np.testing.assert_allclose(truncated[kept], posterior[kept] / posterior[kept].sum())
    states = np.asarray(figure["states"])
    assert (states[posterior.argmax()] == np.asarray(figure["truth"])).all()  # columns + triangle
    cross = states[:, 0] == 1
    assert posterior[cross].sum() < 0.05  # 'the cross is the least consistent with the data point'
    assert rows["kept_posterior_mass"] == pytest.approx(posterior[kept].sum()) and rows["map_is_generating_state"] == 1
    assert figure1_data(tmp_path) is None  # no artifact: no figure


@pytest.mark.parametrize("bad", [{"grid": {"tvem": {"n_states": [0]}}}, {"grid": {"tvem": {"n_states": [2000]}}},
                                 {"grid_size": 9}, {"grid": {"figure1": {}}},
                                 {"figure1_pair": ["square"]}, {"n_prior_samples": 0, "n_bitflips": 0}])
def test_config_rejects_bad_values(bad):
    with pytest.raises(ConfigValueError):
        TVEMBSCConfig(**bad)


def test_grid_cells_and_settings_as_committed():
    """The declared grid: Figure 1 at seed 0 only, TV-EM × |K| and exact EM × seed, with the committed keys and order; a
    cell's settings read as the config before the grid (n_states, exact, figure1)."""
    experiment = TVEMBSC()
    cells = experiment.cells(TVEMBSCConfig(), (0, 1))
    assert [c.key for c in cells] == ["figure1__seed=0"] + [f"tvem__n_states={k}__seed={s}" for s in (0, 1)
                                                            for k in (1, 5, 20)] + ["exact__seed=0", "exact__seed=1"]
    settings = experiment.cell_config(TVEMBSCConfig(grid={"tvem": {"n_states": [5]}}), cells[0])
    assert "grid" not in settings and settings["n_states"] == [5]
    assert settings["exact"] is False and settings["figure1"] is False
    assert TVEMBSCConfig(grid_size=9, grid={"tvem": {"n_states": [5]}}).grid == {"tvem": {"n_states": [5]}}


@pytest.mark.slow
def test_quick_profile_recovers_the_bars(tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["run", "tvem-bsc", "--profile", "quick", "--no-progress", "--results-dir",
                                 str(tmp_path), "--experiments-dir", str(EXPERIMENTS)])
    assert result.exit_code == 0, result.output
    rows = pd.read_csv(tmp_path / "tvem-bsc" / "results.csv")
    assert (rows["status"] == "ok").all()
    wide = rows[rows["method"] != "figure1"].pivot_table(index=["label", "seed"], columns="metric", values="value")
    # |K| = 5 and 20 find every bar on both quick seeds, reach the exact log-likelihood (their truncation is
    # tight) and a noise level near the true sigma = 2
    for label in ("TV-EM |K|=5", "TV-EM |K|=20"):
        runs = wide.loc[label]
        assert (runs["all_bars_recovered"] == 1).all(), runs
        np.testing.assert_allclose(runs["free_energy"], runs["log_likelihood"], rtol=1e-4)
        assert ((runs["sigma"] - 2.0).abs() < 0.15).all()
        assert (runs["log_likelihood"] > runs["true_log_likelihood"] - 0.05).all()
    assert (wide["free_energy"] <= wide["log_likelihood"] + 1e-9).all()
    report = runner.invoke(app, ["report", "tvem-bsc", "--results-dir", str(tmp_path), "--experiments-dir",
                                 str(EXPERIMENTS)])
    assert report.exit_code == 0, report.output
    figures = sorted(p.name for p in (tmp_path / "tvem-bsc" / "figures").glob("*.png"))
    assert figures == ["tvem-bars-dictionary-quick.png", "tvem-bars-free-energy-quick.png",
                       "tvem-bars-recovery-quick.png", "tvem-figure1-quick.png"]
    assert "TV-EM \\|K\\|=20" in (tmp_path / "tvem-bsc" / "tables" / "tvem-bars-recovery-quick.md").read_text()
