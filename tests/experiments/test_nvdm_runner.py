"""The nvdm runner's metrics on a tiny synthetic corpus: FY-NVDM's RE at its own ρ′ and under the authors'
evaluation (1.5-entmax of the same scores, docs/protocols.md), each with its paper keys."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from fyexp.experiments import RunContext
from fyexp.experiments import nvdm as runner
from fyexp.losses.fy_multinomial import l1_reconstruction_error, observation_probs
from fyexp.train import OptimizerConfig, TrainConfig


def _corpus(n_docs=40, vocab=12, seed=0):
    g = torch.Generator().manual_seed(seed)
    counts = torch.poisson(torch.rand(n_docs, vocab, generator=g) * 3, generator=g)
    counts[:, 0] += 1  # no empty document
    return counts[:24], counts[24:32], counts[32:], [f"w{i}" for i in range(vocab)]


@pytest.fixture
def tiny(monkeypatch, tmp_path):
    data = _corpus()
    monkeypatch.setattr(runner, "load_corpus", lambda data_dir, cache_dir: data)
    trained = {}
    original = runner.train_nvdm

    def spy(*args, **kwargs):
        model, history = original(*args, **kwargs)
        trained["model"] = model
        return model, history

    monkeypatch.setattr(runner, "train_nvdm", spy)
    ctx = RunContext("fy-nvdm", "quick", "cpu", None, tmp_path / "work", tmp_path / "artifacts")
    return data, ctx, trained


def _config(observation, rho=1.314):
    return runner.NVDMConfig(observation=observation, rho_prime=rho, n_topics=3, hidden=8, embedder="none",
                             train=TrainConfig(epochs=1, batch_size=8, optimizer=OptimizerConfig(lr=1e-3)))


@pytest.mark.parametrize("rho", [1.314, 2.0])
def test_fy_nvdm_reports_the_re_at_its_rho_and_under_the_authors_evaluation(tiny, rho):
    (_, _, test, _), ctx, trained = tiny
    experiment = runner.NVDMExperiment()
    config = _config("entmax", rho)
    cell = experiment.cells(config, (0,))[0]
    rows = experiment.run_cell(config, cell, ctx)
    by_metric = {}
    for row in rows:
        by_metric.setdefault(row["metric"], []).append(row)
    model = trained["model"]
    with torch.no_grad():
        scores = model.decode(model.encode(test)[0])
    own = l1_reconstruction_error(observation_probs(scores, rho), test).mean()
    authors = l1_reconstruction_error(observation_probs(scores, 1.5), test).mean()
    assert [r["value"] for r in by_metric["avg_reconstruction_error"]] == pytest.approx([float(own)] * 2)
    assert [r["value"] for r in by_metric["avg_reconstruction_error_authors"]] == pytest.approx([float(authors)] * 2)
    assert abs(float(own) - float(authors)) > 1e-4  # two evaluations of one model, not one number twice
    # both carry FYVI and FYVL Table 3's keys, so the report shows the authors' number as the convention column
    for name in ("avg_reconstruction_error", "avg_reconstruction_error_authors"):
        assert sorted((r["paper"], r["table"], r["paper_row"]) for r in by_metric[name]) == [
            ("fyvi", "3", "FY VAE"), ("fyvl", "3", "FY VAE")]


def test_nvdm_has_no_authors_evaluation(tiny):
    _, ctx, _ = tiny
    experiment = runner.NVDMExperiment()
    config = _config("multinomial")
    rows = experiment.run_cell(config, experiment.cells(config, (0,))[0], ctx)
    assert "avg_reconstruction_error_authors" not in {r["metric"] for r in rows}
    assert "perplexity" in {r["metric"] for r in rows}


def test_a_tuning_trial_trains_at_the_trial_config_reports_each_nvdm_epoch_and_returns_the_last_valid_re(tiny, tmp_path):
    """``trial`` (the objective of ``fyexp tune``): one report per NVDM epoch (2 alternating passes each), the
    return value the last one reported, the corpus read once per worker."""
    (_, valid, _, _), ctx, trained = tiny
    experiment = runner.NVDMExperiment()
    config = dataclasses.replace(_config("entmax", 1.5), train=TrainConfig(epochs=3, batch_size=8,
                                                                           optimizer=OptimizerConfig(lr=1e-3)))
    reports = []
    value = experiment.trial(config, ctx, lambda step, v: reports.append((step, v)), tmp_path / "trial")
    assert [step for step, _ in reports] == [1, 2, 3] and value == reports[-1][1]
    model = trained["model"]
    with torch.no_grad():
        expected = l1_reconstruction_error(observation_probs(model.decode(model.encode(valid)[0]), 1.5), valid).mean()
    assert value == pytest.approx(float(expected), rel=1e-5)
    experiment.trial(config, ctx, lambda step, v: None, tmp_path / "trial2")
    assert experiment._corpus is tiny[0]



def test_a_cell_without_an_embedder_says_why_its_coherence_is_left_out(tiny, monkeypatch, capsys, tmp_path):
    """sentence-transformers missing (it is in requirements.lock) or a model folder that is not there: the cell still
    finishes, without topic_coherence rows, and prints one line naming the reason (it was silent)."""
    import sys

    _, ctx, _ = tiny
    experiment = runner.NVDMExperiment()
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import fails as if not installed
    config = dataclasses.replace(_config("multinomial"), embedder=str(tmp_path))
    cell = experiment.cells(config, (0,))[0]
    rows = experiment.run_cell(config, cell, ctx)
    assert "topic_coherence" not in {r["metric"] for r in rows}
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"cell {cell.key}: topic coherence left out: sentence-transformers is not installed "
                   "(pip install --no-deps -r requirements.lock)"]
    missing = dataclasses.replace(config, embedder=str(tmp_path / "no-model"))
    experiment.run_cell(missing, cell, ctx)
    assert "no-model: no such folder" in capsys.readouterr().err
    experiment.run_cell(dataclasses.replace(config, embedder="none"), cell, ctx)  # asked for none: no word
    assert capsys.readouterr().err == ""


def test_load_embedder_loads_a_working_model_and_says_nothing(monkeypatch, tmp_path):
    """The success side: a model that loads is returned with no reason."""
    import sys
    import types

    from fyexp.topics import coherence

    class Model:
        def __init__(self, source, device, local_files_only=False):
            self.source, self.local_files_only = source, local_files_only

    monkeypatch.setitem(sys.modules, "sentence_transformers", types.SimpleNamespace(SentenceTransformer=Model))
    embedder, why_not = coherence.load_embedder(str(tmp_path))
    assert why_not == "" and embedder.model.source == str(tmp_path) and embedder.model.local_files_only


def test_a_hub_name_is_tried_online_only_when_the_hub_answers(monkeypatch):
    """The hub name not in the local cache: with the hub unreachable, one line at once (the hub client alone
    retries for about 80 s); with it reachable, the online load is tried and its model returned."""
    import sys
    import types

    from fyexp.topics import coherence

    calls = []

    class Model:
        def __init__(self, source, device, local_files_only=False):
            calls.append(local_files_only)
            if local_files_only:
                raise OSError("not in the cache")
            self.source = source

    monkeypatch.setitem(sys.modules, "sentence_transformers", types.SimpleNamespace(SentenceTransformer=Model))
    monkeypatch.delenv("FYEXP_EMBEDDER", raising=False)
    monkeypatch.setattr(coherence, "_reachable", lambda host, *a, **k: False)
    embedder, why_not = coherence.load_embedder()
    assert embedder is None and calls == [True]
    assert "not in the local Hugging Face cache" in why_not and "FYEXP_EMBEDDER" in why_not and "\n" not in why_not
    monkeypatch.setattr(coherence, "_reachable", lambda host, *a, **k: True)
    calls.clear()
    embedder, why_not = coherence.load_embedder()
    assert why_not == "" and calls == [True, False] and embedder.model.source == coherence.DEFAULT_MODEL
