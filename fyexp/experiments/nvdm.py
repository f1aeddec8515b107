"""NVDM and FY-NVDM on 20 Newsgroups (FYVI Table 3 and Figure 3; fyvl §4.3): tuning, 5-seed runs, coherence.

One runner serves two specs: ``nvdm`` (``observation: multinomial``, Miao et al.'s softmax decoder and
multinomial likelihood) and ``fy-nvdm`` (``observation: entmax``, a ρ′-entmax decoder trained with the scaled
Tsallis FY loss).  Both train with :func:`fyexp.train.nvdm.train_nvdm` (the β-ELBO
E_q[N · L(θ(z); x/N)] + β KL(q ‖ N(0, I)) in NVDM's alternating decoder / encoder passes, the spec's ``train:``
settings) on :func:`fyexp.data.newsgroups.load_count_tensors`, and report

* RE — ‖x/N − p(μ(x))‖₁ averaged over the 6,505 test documents, p the decoder's distribution at the encoder's
  mean (Table 3) — and the same on the 1,000 validation documents;
* for FY-NVDM also ``avg_reconstruction_error_authors``, the RE as the authors' evaluation computed it:
  ‖x/N − 1.5-entmax(θ(μ(x)))‖₁ of the same scores, whatever ρ′ the model was trained with
  (docs/protocols.md, FYVI Table 3); the report shows it as Table 3's convention column;
* NVDM's perplexity exp(mean_d −ELBO_d / N_d) (``nvdm`` only: an entmax decoder gives zero probability to
  words a document has, so its perplexity is infinite);
* embedding topic coherence of each latent dimension's top-n words, n = 5…25 (Figure 3).

``fyexp tune NAME`` searches the profile's ``search`` space with Optuna (objective: validation RE after the
last epoch; median pruning on the per-epoch validation RE); ``fyexp run NAME --best`` runs the seeds with
the best parameters found (``results/NAME/best_params.yaml``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from fyexp.data.newsgroups import load_count_tensors as load_corpus
from fyexp.core.errors import CellFailed
from fyexp.experiments import RunContext, register
from fyexp.experiments.grid import GridExperiment, Metric, PaperKeys, metric
from fyexp.experiments.base import CellWork
from fyexp.experiments.nvdm_config import IDENTITY, NVDMConfig, cell_config, cell_work
from fyexp.models.nvdm import perplexity, reconstruction_error, topic_word_weights
from fyexp.store.results import Cell
from fyexp.train.nvdm import train_nvdm

ROW = {"multinomial": "NVDM", "entmax": "FY VAE"}
AUTHORS_EVAL_RHO = 1.5  # the authors' FY-NVDM evaluation: 1.5-entmax whatever ρ′ was (docs/protocols.md)


@register
class NVDMExperiment(GridExperiment):
    name = "nvdm"
    Config = NVDMConfig
    cell_config = staticmethod(cell_config)   # the settings scope, in the light config module
    identity = IDENTITY
    TRIAL_OBJECTIVE = "validation RE"  # FYVI Table 3: mean L1 reconstruction error per document
    PARAM_ALIASES = dict(IDENTITY)  # best_params.yaml of the first studies
    paper_keys = PaperKeys(tables=(("fyvi", "3"), ("fyvl", "3")), row=lambda cell: cell.method,
                           metrics=("avg_reconstruction_error", "avg_reconstruction_error_authors"),
                           setting="20NewsGroups")
    _corpus = None  # the data a tuning worker's trials share (:meth:`trial`)
    seed_streams = {"init": 0, "mc": 0}  # training (init, batches), the perplexity's samples; as the first runs

    def load_data(self, data_dir: Path | None, cache_dir: str | None):
        """(train, valid, test, vocabulary) of 20 Newsgroups, :func:`fyexp.data.newsgroups.load_count_tensors`: the
        runner's one data source, replaced on an instance to feed it other data (``fyexp.run.fingerprints``' corpus)."""
        return load_corpus(data_dir, cache_dir)

    def method(self, config: NVDMConfig, params: dict) -> str:
        return ROW[config.observation]

    def work(self, stated: dict, params: dict) -> CellWork | None:
        """Training documents per stated epoch and evaluation units (:func:`cell_work`)."""
        return CellWork.of(cell_work(stated, params))

    def run_identity(self, config: NVDMConfig) -> dict:
        """The hyperparameters that name a cell (a tuned run never reuses an untuned run's cells); NVDM has no ρ′."""
        fixed = super().run_identity(config)
        return fixed if config.observation == "entmax" else {k: v for k, v in fixed.items() if k != "rho_prime"}

    def measure(self, config: NVDMConfig, cell: Cell, ctx: RunContext) -> list[Metric]:
        train, valid, test, vocabulary = self.load_data(ctx.data_dir, config.cache_dir)
        model, history = train_nvdm(config, train, valid, seed=self.seed_stream(cell, "init"), device=ctx.device,
                                    work_dir=ctx.work_dir, subtask=ctx.subtask, label=f"{ctx.experiment}/{cell.key}")
        test_re = reconstruction_error(model.cpu(), test, config.alpha)
        if not torch.isfinite(test_re).all():
            raise CellFailed("non-finite reconstruction error on the test set")
        out = [metric("avg_reconstruction_error", float(test_re.mean()),
                      float(2 * test_re.std() / math.sqrt(len(test_re)))),
               metric("valid_reconstruction_error", float(reconstruction_error(model, valid, config.alpha).mean()),
                      label=f"{ROW[config.observation]} validation RE (1,000 docs)")]
        if config.observation == "entmax":
            authors_re = reconstruction_error(model, test, AUTHORS_EVAL_RHO)
            out.append(metric("avg_reconstruction_error_authors", float(authors_re.mean()),
                              float(2 * authors_re.std() / math.sqrt(len(authors_re)))))
        out += [metric("documents", float(len(split)), split=name, label=f"{name} documents")
                for name, split in (("train", train), ("valid", valid), ("test", test))]
        out.append(metric("epoch_time_s", float(np.mean([h["epoch_time_s"] for h in history]))
                          * 2 * config.alternating_epochs, label="wall seconds per NVDM epoch"))
        if config.observation == "multinomial":
            torch.manual_seed(self.seed_stream(cell, "mc"))
            out.append(metric("perplexity", perplexity(model, test, config.perplexity_samples),
                              label="NVDM test perplexity"))
        return out + self._coherence(config, cell, ctx, model, vocabulary)

    def _coherence(self, config, cell, ctx, model, vocabulary) -> list[Metric]:
        """Saves each topic's top words (``topics__<cell>.json``); their coherence where an embedder loads."""
        from fyexp.topics import load_embedder, top_words, topic_coherence

        topics = top_words(topic_word_weights(model).numpy(), vocabulary, max(config.coherence_sizes))
        ctx.save_text(f"topics__{cell.key}.json", json.dumps(topics, indent=0))
        embedder, why_not = (None, "") if config.embedder == "none" else load_embedder(config.embedder)
        if why_not:
            ctx.note(f"cell {cell.key}: topic coherence left out: {why_not}")
        scores = {} if embedder is None else topic_coherence(topics, embedder, config.coherence_sizes)
        return [metric("topic_coherence", v, k=n, label=f"coherence of the top {n} words") for n, v in scores.items()]

    def trial(self, config: NVDMConfig, ctx: RunContext, report: Callable[[int, float], None], work_dir: Path) -> float:
        """One tuning trial (:func:`fyexp.spec.tuning.tune_experiment`): the validation RE after the last epoch."""
        if self._corpus is None:  # read once per tuning worker
            self._corpus = self.load_data(ctx.data_dir, config.cache_dir)
        train, valid, _, _ = self._corpus
        _, history = train_nvdm(config, train, valid, seed=config.tune_seed, device=ctx.device, work_dir=work_dir,
                                label=f"{ctx.experiment} trial", report=report)
        return [h["valid_re"] for h in history if "valid_re" in h][-1]
