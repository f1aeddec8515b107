"""NVDM and FY-NVDM on 20 Newsgroups (FYVI Table 3 and Figure 3; fyvl §4.3): tuning, 5-seed runs, coherence.

One runner serves two specs: ``nvdm`` (``observation: multinomial``, Miao et al.'s softmax decoder and
multinomial likelihood) and ``fy-nvdm`` (``observation: entmax``, a ρ′-entmax decoder trained with the scaled
Tsallis FY loss).  Both train :func:`fyexp.models.build_nvdm` with :class:`fyexp.train.VariationalTask` on the
β-ELBO (:class:`fyexp.objectives.ELBO`), i.e. the loss E_q[N · L(θ(z); x/N)] + β KL(q ‖ N(0, I)), with the
spec's ``train:`` settings, alternating ``alternating_epochs`` decoder-only
passes and as many encoder-only passes per epoch (NVDM's schedule: an epoch is 2 × ``alternating_epochs``
passes over the training set), and report

* RE — ‖x/N − p(μ(x))‖₁ averaged over the 6,505 test documents, p the decoder's distribution at the encoder's
  mean (Table 3) — and the same on the 1,000 validation documents;
* for FY-NVDM also ``avg_reconstruction_error_authors``, the RE as the authors' evaluation computed it:
  ‖x/N − 1.5-entmax(θ(μ(x)))‖₁ of the same scores, whatever ρ′ the model was trained with (anchors.md, "FY-NVDM":
  "its evaluation used entmax-1.5 whatever α was"); the report shows it as Table 3's convention column;
* NVDM's perplexity exp(mean_d −ELBO_d / N_d) (``nvdm`` only: an entmax decoder gives zero probability to
  words a document has, so its perplexity is infinite);
* embedding topic coherence of each latent dimension's top-n words, n = 5…25 (Figure 3).

``fyexp tune NAME`` searches the profile's ``search`` space with Optuna (objective: validation RE after the
last epoch; median pruning on the per-epoch validation RE); ``fyexp run NAME --best`` runs the seeds with
the best parameters found (``results/NAME/best_params.yaml``).
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Literal

import numpy as np
import torch

from fyexp.errors import CellFailed, require
from fyexp.experiments import RunContext, register
from fyexp.experiments.grid import GridExperiment, Metric, PaperKeys, metric
from fyexp.io import atomic_write_text
from fyexp.models import VAE, build_nvdm
from fyexp.models.nvdm import perplexity, reconstruction_error, topic_word_weights
from fyexp.objectives import ELBO
from fyexp.results import Cell
from fyexp.train import OptimizerConfig, TrainConfig, Trainer, VariationalTask, make_optimizer, seed_everything

ROW = {"multinomial": "NVDM", "entmax": "FY VAE"}
AUTHORS_EVAL_RHO = 1.5  # the authors' FY-NVDM evaluation: 1.5-entmax whatever ρ′ was (anchors.md)
TABLES = (("fyvi", "3"), ("fyvl", "3"))
SETTING = "20NewsGroups"
# the parameters that name a cell (its identity), as paths into the config; the names are those of the first runs
IDENTITY = {"rho_prime": "rho_prime", "learning_rate": "train.optimizer.lr", "batch_size": "train.batch_size",
            "epochs": "train.epochs", "alternating_epochs": "alternating_epochs", "n_topics": "n_topics",
            "beta": "beta"}
TUNABLE = tuple(IDENTITY.values())


@dataclass
class NVDMConfig:
    """Hyperparameters of one NVDM / FY-NVDM run and of its tuning study (FYVI Appendix D)."""

    observation: Literal["multinomial", "entmax"] = "multinomial"
    rho_prime: float = 1.314
    n_topics: int = 50
    hidden: int = 500
    beta: float = 0.01
    train: TrainConfig = field(default_factory=lambda: TrainConfig(epochs=500, batch_size=64,
                                                                   optimizer=OptimizerConfig(lr=5e-5)))
    alternating_epochs: int = 1
    perplexity_samples: int = 20
    coherence_sizes: list[int] = field(default_factory=lambda: [5, 10, 15, 20, 25])
    embedder: str = ""
    cache_dir: str = ""
    n_trials: int = 100
    search: dict = field(default_factory=dict)
    tune_seed: int = 0
    heartbeat_interval: int = 30
    grace_period: int = 120

    def __post_init__(self):
        require(self.rho_prime >= 1.0, "rho_prime", "a number >= 1", self.rho_prime)
        for key in ("n_topics", "hidden", "alternating_epochs", "n_trials", "perplexity_samples"):
            require(getattr(self, key) >= 1, key, "an integer >= 1", getattr(self, key))
        require(self.beta >= 0, "beta", "a number >= 0", self.beta)
        require(all(n >= 2 for n in self.coherence_sizes), "coherence_sizes", "integers >= 2", self.coherence_sizes)
        from fyexp.tuning import check_search

        check_search(self.search, type(self), TUNABLE)

    @property
    def alpha(self) -> float:
        """The observation model's Tsallis index: ρ′ for FY-NVDM, 1 (softmax) for NVDM."""
        return self.rho_prime if self.observation == "entmax" else 1.0

# ---------------------------------------------------------------------------------------------- training
class NVDMTask(VariationalTask):
    """NVDM's objective and alternating schedule for :class:`fyexp.train.Trainer`.

    Trainer epochs are passes over the data; NVDM epoch e consists of passes 2A(e−1)+1 … 2Ae, the first A
    updating only the decoder, the last A only the encoder (A = ``alternating_epochs``; Miao et al.'s order).
    The other half's parameters are frozen for the pass, so no gradient is computed for them.  After each
    NVDM epoch the validation RE is computed and passed to ``report(epoch, value)`` (which may prune).
    """

    def __init__(self, model: VAE, config: NVDMConfig, valid: torch.Tensor,
                 report: Callable[[int, float], None] | None = None):
        super().__init__(model, ELBO(beta=config.beta), valid)
        self.config, self.report = config, report
        self.cycle = 2 * config.alternating_epochs

    def configure_optimizers(self) -> dict[str, torch.optim.Optimizer]:
        optimizer = self.train_config.optimizer
        return {"decoder": make_optimizer(optimizer, self.model.decoder_parameters()),
                "encoder": make_optimizer(optimizer, self.model.encoder_parameters())}

    def phase(self, epoch: int) -> str:
        return "decoder" if (epoch - 1) % self.cycle < self.config.alternating_epochs else "encoder"

    def optimizers_for_epoch(self, epoch: int) -> list[str]:
        return [self.phase(epoch)]

    def on_epoch_start(self, epoch: int) -> None:
        decoder = self.phase(epoch) == "decoder"
        for p in self.model.decoder_parameters():
            p.requires_grad_(decoder)
        for p in self.model.encoder_parameters():
            p.requires_grad_(not decoder)

    def validate(self, epoch: int) -> dict[str, float]:
        if epoch % self.cycle:
            return {}
        return {"valid_re": float(reconstruction_error(self.model, self.valid, self.config.alpha).mean())}

    def on_epoch_end(self, epoch: int, metrics) -> bool:
        if "valid_re" in metrics and self.report is not None:
            self.report(epoch // self.cycle, metrics["valid_re"])
        return False


def train_nvdm(config: NVDMConfig, train: torch.Tensor, valid: torch.Tensor, *, seed: int, device: str,
               work_dir: Path | None, subtask=None, label: str = "nvdm",
               report: Callable[[int, float], None] | None = None) -> tuple[VAE, list[dict]]:
    """Train one model (resuming from ``work_dir``'s checkpoint); return it and the per-pass history."""
    seed_everything(seed)
    model = build_nvdm(train.shape[1], config.n_topics, config.hidden, config.alpha)
    task = NVDMTask(model, config, valid.to(device), report)
    passes = dataclasses.replace(config.train, epochs=config.train.epochs * task.cycle, seed=seed)
    trainer = Trainer(passes, device=device, work_dir=work_dir, subtask=subtask, label=label)
    history = trainer.fit(task, train)
    for p in model.parameters():
        p.requires_grad_(True)
    model.eval()
    return model, history


def load_corpus(config: NVDMConfig, ctx: RunContext):
    """Dense float32 count tensors (train, valid, test) and the vocabulary."""
    from fyexp.data.newsgroups import load_newsgroups

    bow = load_newsgroups(ctx.data_dir, Path(config.cache_dir) if config.cache_dir else None)
    dense = [torch.from_numpy(m.toarray()) for m in (bow.train, bow.valid, bow.test)]
    return (*dense, bow.vocabulary)


# ------------------------------------------------------------------------------------------- experiment
@register
class NVDMExperiment(GridExperiment):
    name = "nvdm"
    Config = NVDMConfig
    identity = IDENTITY
    PARAM_ALIASES = dict(IDENTITY)  # best_params.yaml of the first studies
    paper_keys = PaperKeys(tables=TABLES, metrics=("avg_reconstruction_error", "avg_reconstruction_error_authors"),
                           row=lambda cell: cell.method, setting=SETTING)

    def method(self, config: NVDMConfig, params: dict) -> str:
        return ROW[config.observation]

    def run_identity(self, config: NVDMConfig) -> dict:
        """The hyperparameters that name a cell (so a tuned run never reuses an untuned run's cells); NVDM's
        softmax has no ρ′."""
        fixed = super().run_identity(config)
        return fixed if config.observation == "entmax" else {k: v for k, v in fixed.items() if k != "rho_prime"}

    def measure(self, config: NVDMConfig, cell: Cell, ctx: RunContext) -> list[Metric]:
        train, valid, test, vocabulary = load_corpus(config, ctx)
        model, history = train_nvdm(config, train, valid, seed=cell.seed, device=ctx.device, work_dir=ctx.work_dir,
                                    subtask=ctx.subtask, label=f"{ctx.experiment}/{cell.key}")
        model.cpu()
        test_re = reconstruction_error(model, test, config.alpha)
        if not torch.isfinite(test_re).all():
            raise CellFailed("non-finite reconstruction error on the test set")
        row = ROW[config.observation]
        out = [metric("avg_reconstruction_error", float(test_re.mean()),
                      float(2 * test_re.std() / math.sqrt(len(test_re)))),
               metric("valid_reconstruction_error", float(reconstruction_error(model, valid, config.alpha).mean()),
                      label=f"{row} validation RE (1,000 docs)")]
        if config.observation == "entmax":
            authors_re = reconstruction_error(model, test, AUTHORS_EVAL_RHO)
            out.append(metric("avg_reconstruction_error_authors", float(authors_re.mean()),
                              float(2 * authors_re.std() / math.sqrt(len(authors_re)))))
        out += [metric("documents", float(len(split)), split=name, label=f"{name} documents")
                for name, split in (("train", train), ("valid", valid), ("test", test))]
        out.append(metric("epoch_time_s", float(np.mean([h["epoch_time_s"] for h in history]))
                          * 2 * config.alternating_epochs, label="wall seconds per NVDM epoch"))
        if config.observation == "multinomial":
            torch.manual_seed(cell.seed)
            out.append(metric("perplexity", perplexity(model, test, config.perplexity_samples),
                              label="NVDM test perplexity"))
        return out + self._coherence(config, cell, ctx, model, vocabulary)

    def _coherence(self, config, cell, ctx, model, vocabulary) -> list[Metric]:
        from fyexp.topics import load_embedder, top_words, topic_coherence

        topics = top_words(topic_word_weights(model).numpy(), vocabulary, max(config.coherence_sizes))
        ctx.artifact_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_text(ctx.artifact_dir / f"topics__{cell.key}.json", json.dumps(topics, indent=0))
        embedder = None if config.embedder == "none" else load_embedder(config.embedder)
        if embedder is None:
            return []
        scores = topic_coherence(topics, embedder, config.coherence_sizes)
        return [metric("topic_coherence", v, k=n, label=f"coherence of the top {n} words") for n, v in scores.items()]

    # ------------------------------------------------------------------------------------------- tuning
    def trial(self, config: NVDMConfig, ctx: RunContext, report: Callable[[int, float], None], work_dir: Path) -> float:
        """One tuning trial (:func:`fyexp.tuning.tune_experiment`): the validation RE after the last epoch."""
        train, valid, _, _ = self._corpus(config, ctx)
        _, history = train_nvdm(config, train, valid, seed=config.tune_seed, device=ctx.device, work_dir=work_dir,
                                label=f"{ctx.experiment} trial", report=report)
        return [h["valid_re"] for h in history if "valid_re" in h][-1]

    def _corpus(self, config, ctx):
        if not hasattr(self, "_cached_corpus"):
            self._cached_corpus = load_corpus(config, ctx)
        return self._cached_corpus
