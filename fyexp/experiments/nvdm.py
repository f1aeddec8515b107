"""NVDM and FY-NVDM on 20 Newsgroups (FYVI Table 3 and Figure 3; fyvl §4.3): tuning, 5-seed runs, coherence.

One runner serves two specs: ``nvdm`` (``observation: multinomial``, Miao et al.'s softmax decoder and
multinomial likelihood) and ``fy-nvdm`` (``observation: entmax``, a ρ′-entmax decoder trained with the scaled
Tsallis FY loss).  Both train :class:`fyexp.models.nvdm.NVDM` with the shared :class:`fyexp.train.Trainer` on
the objective E_q[N · L(θ(z); x/N)] + β KL(q ‖ N(0, I)), alternating ``alternating_epochs`` decoder-only
passes and as many encoder-only passes per epoch (NVDM's schedule: an epoch is 2 × ``alternating_epochs``
passes over the training set), and report

* RE — ‖x/N − p(μ(x))‖₁ averaged over the 6,505 test documents, p the decoder's distribution at the encoder's
  mean (Table 3) — and the same on the 1,000 validation documents;
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
import shutil
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal

import numpy as np
import pandas as pd
import torch

from fyexp.errors import CellFailed, FyexpError, require
from fyexp.experiments import Experiment, RunContext, register
from fyexp.models.nvdm import NVDM, nvdm_objective, perplexity, reconstruction_error
from fyexp.results import Cell, atomic_write_text
from fyexp.train import TrainConfig, Trainer, TrainTask, seed_everything

ROW = {"multinomial": "NVDM", "entmax": "FY VAE"}
TABLES = (("fyvi", "3"), ("fyvl", "3"))
SETTING = "20NewsGroups"
TUNABLE = ("rho_prime", "learning_rate", "batch_size", "epochs", "alternating_epochs", "n_topics", "beta")
BEST_PARAMS = "best_params.yaml"


@dataclass
class NVDMConfig:
    """Hyperparameters of one NVDM / FY-NVDM run and of its tuning study (FYVI Appendix D)."""

    observation: Literal["multinomial", "entmax"] = "multinomial"
    rho_prime: float = 1.314
    n_topics: int = 50
    hidden: int = 500
    beta: float = 0.01
    learning_rate: float = 5e-5
    batch_size: int = 64
    epochs: int = 500
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
        for key in ("n_topics", "hidden", "batch_size", "epochs", "alternating_epochs", "n_trials",
                    "perplexity_samples"):
            require(getattr(self, key) >= 1, key, "an integer >= 1", getattr(self, key))
        require(self.beta >= 0, "beta", "a number >= 0", self.beta)
        require(self.learning_rate > 0, "learning_rate", "a number > 0", self.learning_rate)
        require(all(n >= 2 for n in self.coherence_sizes), "coherence_sizes", "integers >= 2", self.coherence_sizes)
        for name, space in self.search.items():
            require(name in TUNABLE, f"search.{name}", f"one of {list(TUNABLE)}", name)
            require(isinstance(space, dict) and ("choices" in space or {"low", "high"} <= set(space)),
                    f"search.{name}", "a mapping with 'choices', or 'low' and 'high' (and optionally 'log')", space)

    @property
    def alpha(self) -> float:
        """The observation model's Tsallis index: ρ′ for FY-NVDM, 1 (softmax) for NVDM."""
        return self.rho_prime if self.observation == "entmax" else 1.0

    def run_params(self) -> dict:
        """The hyperparameters that name a cell (so a tuned run never reuses an untuned run's cells)."""
        keys = [k for k in TUNABLE if k != "rho_prime" or self.observation == "entmax"]
        return {k: getattr(self, k) for k in keys}


# ---------------------------------------------------------------------------------------------- training
class NVDMTask(TrainTask):
    """NVDM's objective and alternating schedule for :class:`fyexp.train.Trainer`.

    Trainer epochs are passes over the data; NVDM epoch e consists of passes 2A(e−1)+1 … 2Ae, the first A
    updating only the decoder, the last A only the encoder (A = ``alternating_epochs``; Miao et al.'s order).
    The other half's parameters are frozen for the pass, so no gradient is computed for them.  After each
    NVDM epoch the validation RE is computed and passed to ``report(epoch, value)`` (which may prune).
    """

    def __init__(self, model: NVDM, config: NVDMConfig, valid: torch.Tensor,
                 report: Callable[[int, float], None] | None = None):
        self.model, self.config, self.valid, self.report = model, config, valid, report
        self.cycle = 2 * config.alternating_epochs

    def configure_optimizers(self) -> dict[str, torch.optim.Optimizer]:
        lr = self.config.learning_rate
        return {"decoder": torch.optim.Adam(self.model.decoder_parameters(), lr=lr),
                "encoder": torch.optim.Adam(self.model.encoder_parameters(), lr=lr)}

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

    def loss(self, batch):
        (counts,) = batch
        parts = nvdm_objective(self.model, counts, self.config.alpha, self.config.beta)
        return parts["objective"].mean(), {"reconstruction": parts["reconstruction"].mean(), "kl": parts["kl"].mean()}

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
               report: Callable[[int, float], None] | None = None) -> tuple[NVDM, list[dict]]:
    """Train one model (resuming from ``work_dir``'s checkpoint); return it and the per-pass history."""
    seed_everything(seed)
    model = NVDM(train.shape[1], config.n_topics, config.hidden)
    task = NVDMTask(model, config, valid.to(device), report)
    trainer = Trainer(TrainConfig(epochs=config.epochs * task.cycle, batch_size=config.batch_size, seed=seed),
                      device=device, work_dir=work_dir, subtask=subtask, label=label)
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
class NVDMExperiment(Experiment):
    name = "nvdm"
    Config = NVDMConfig

    def cells(self, config: NVDMConfig, seeds: tuple[int, ...]) -> list[Cell]:
        return [Cell(ROW[config.observation], seed, config.run_params()) for seed in seeds]

    def run_cell(self, config: NVDMConfig, cell: Cell, ctx: RunContext) -> list[dict]:
        train, valid, test, vocabulary = load_corpus(config, ctx)
        model, history = train_nvdm(config, train, valid, seed=cell.seed, device=ctx.device, work_dir=ctx.work_dir,
                                    subtask=ctx.subtask, label=f"{ctx.experiment}/{cell.key}")
        model.cpu()
        test_re = reconstruction_error(model, test, config.alpha)
        if not torch.isfinite(test_re).all():
            raise CellFailed("non-finite reconstruction error on the test set")
        row = ROW[config.observation]
        rows = [{"metric": "avg_reconstruction_error", "value": float(test_re.mean()), "paper": paper, "table": table,
                 "setting": SETTING, "paper_row": row, "tolerance": float(2 * test_re.std() / math.sqrt(len(test_re)))}
                for paper, table in TABLES]
        rows.append({"metric": "valid_reconstruction_error",
                     "value": float(reconstruction_error(model, valid, config.alpha).mean()),
                     "label": f"{row} validation RE (1,000 docs)"})
        rows += [{"metric": "documents", "value": float(len(split)), "split": name, "label": f"{name} documents"}
                 for name, split in (("train", train), ("valid", valid), ("test", test))]
        rows.append({"metric": "epoch_time_s", "value": float(np.mean([h["epoch_time_s"] for h in history]))
                     * 2 * config.alternating_epochs, "label": "wall seconds per NVDM epoch"})
        if config.observation == "multinomial":
            torch.manual_seed(cell.seed)
            rows.append({"metric": "perplexity", "value": perplexity(model, test, config.perplexity_samples),
                         "label": "NVDM test perplexity"})
        rows += self._coherence_rows(config, cell, ctx, model, vocabulary)
        return rows

    def _coherence_rows(self, config, cell, ctx, model, vocabulary) -> list[dict]:
        from fyexp.topics import load_embedder, top_words, topic_coherence

        topics = top_words(model.topic_word_weights().numpy(), vocabulary, max(config.coherence_sizes))
        ctx.artifact_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_text(ctx.artifact_dir / f"topics__{cell.key}.json", json.dumps(topics, indent=0))
        embedder = None if config.embedder == "none" else load_embedder(config.embedder)
        if embedder is None:
            return []
        scores = topic_coherence(topics, embedder, config.coherence_sizes)
        return [{"metric": "topic_coherence", "value": v, "k": n, "label": f"coherence of the top {n} words"}
                for n, v in scores.items()]

    # ------------------------------------------------------------------------------------------- tuning
    def tune(self, config: NVDMConfig, ctx: RunContext, *, n_trials: int | None = None, timeout: float | None = None,
             storage: str | None = None, results_dir: Path | None = None, **_: Any) -> None:
        import optuna

        from fyexp.tuning import StudyOptions, default_storage_url, open_study, retry_root, run_study, write_best_params

        if not config.search:
            raise FyexpError(f"{ctx.experiment}: the profile '{ctx.profile}' defines no 'search' space")
        folder = Path(results_dir or "results") / ctx.experiment
        options = StudyOptions(seed=config.tune_seed, heartbeat_interval=config.heartbeat_interval,
                               grace_period=config.grace_period, n_startup_trials=min(10, max(2, config.n_trials // 5)),
                               n_warmup_steps=max(1, min(5, _lowest_epochs(config) // 2)))
        url = storage or default_storage_url(folder)
        study = open_study(f"{ctx.experiment}-{ctx.profile}", url, options)
        train, valid, _, _ = load_corpus(config, ctx)

        def objective(trial: optuna.Trial) -> float:
            trial_config = dataclasses.replace(config, **suggest(trial, config.search, NVDMConfig))
            work = ctx.work_dir / f"trial-{retry_root(trial)}"

            def report(epoch: int, value: float) -> None:
                trial.report(value, epoch)
                if trial.should_prune():
                    raise optuna.TrialPruned(f"validation RE {value:.4f} after epoch {epoch}")

            try:
                _, history = train_nvdm(trial_config, train, valid, seed=config.tune_seed, device=ctx.device,
                                        work_dir=work, label=f"{ctx.experiment} trial {trial.number}", report=report)
            finally:  # a finished or pruned trial's checkpoints are not needed; a killed one's are kept
                shutil.rmtree(work, ignore_errors=True)
            return [h["valid_re"] for h in history if "valid_re" in h][-1]

        def after_trial(study: optuna.Study) -> None:
            if any(t.state.name == "COMPLETE" for t in study.get_trials(deepcopy=False)):
                write_best_params(study, folder / BEST_PARAMS, {"profile": ctx.profile, "storage": _public(url)})

        budget = None if n_trials is not None else config.n_trials
        ran = run_study(study, objective, budget=budget, n_trials=n_trials, timeout=timeout, on_trial_end=after_trial)
        after_trial(study)
        print(f"{ctx.experiment}: {ran} trials run in this call; study '{study.study_name}' in {_public(url)}")

    def with_best(self, resolved, results_dir: Path):
        """``resolved`` with the parameters of ``results/<name>/best_params.yaml`` (from ``fyexp tune``)."""
        from fyexp.specs import ResolvedSpec, build_config
        from fyexp.tuning import read_best_params

        path = Path(results_dir) / resolved.name / BEST_PARAMS
        if not path.is_file():
            raise FyexpError(f"--best: no {path}; run `fyexp tune {resolved.name}` first")
        params = read_best_params(path)
        values = {**dataclasses.asdict(resolved.config), **params}
        config = build_config(NVDMConfig, values, path, "params")
        return ResolvedSpec(spec=resolved.spec, profile=resolved.profile, seeds=resolved.seeds, config=config,
                            raw={**resolved.raw, **params})

    # ------------------------------------------------------------------------------------------- report
    def report(self, frame: pd.DataFrame, figures_dir: Path, artifacts_root: Path) -> list[Path]:
        """Figure 3 (coherence of NVDM vs FY-NVDM, read from both experiments' results) and the study's history."""
        from fyexp.topics.figures import coherence_figure
        from fyexp.tuning import report_study

        folder = artifacts_root.parent
        frames = {}
        for name in SIBLINGS:
            frames[name] = frame if name == folder.name else _read_results(folder.parent / name)
        paths = coherence_figure({LABELS[k]: v for k, v in frames.items()}, figures_dir, stem="topic_coherence")
        paths += report_study(folder / BEST_PARAMS, figures_dir, title=f"{folder.name} tuning")
        return paths


SIBLINGS = ("nvdm", "fy-nvdm")
LABELS = {"nvdm": "NVDM", "fy-nvdm": "FY-NVDM"}


def _read_results(folder: Path) -> pd.DataFrame:
    path = folder / "results.csv"
    if not path.is_file():
        return pd.DataFrame()
    frame = pd.read_csv(path)
    return frame[frame["status"].fillna("ok") == "ok"]


def suggest(trial, search: dict, config_cls: type) -> dict:
    """Sample one value per entry of ``search`` (``{choices}`` or ``{low, high, log, step}``), typed by the Config."""
    hints = typing.get_type_hints(config_cls)
    values = {}
    for name, space in search.items():
        if "choices" in space:
            values[name] = trial.suggest_categorical(name, list(space["choices"]))
        elif hints[name] is int:
            values[name] = trial.suggest_int(name, int(space["low"]), int(space["high"]), step=int(space.get("step", 1)),
                                             log=bool(space.get("log")))
        else:
            values[name] = trial.suggest_float(name, float(space["low"]), float(space["high"]), log=bool(space.get("log")))
    return values


def _lowest_epochs(config: NVDMConfig) -> int:
    space = config.search.get("epochs")
    if not space:
        return config.epochs
    return int(min(space["choices"])) if "choices" in space else int(space["low"])


def _public(url: str) -> str:
    """A storage URL without its password."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
