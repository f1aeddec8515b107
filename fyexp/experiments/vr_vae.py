r"""VAEs trained with the VR bound: Li & Turner Table 1, the in-text numbers (§5.1), Figures 3 and 4.

One cell = one method × setting (data set, stochastic layers L, samples K) × seed (× fold for Frey Face):

=================  ==========================================================================  ================
method             objective (:mod:`fyexp.objectives`)                                         row
=================  ==========================================================================  ================
``vae``            ELBO, α = 1: (1/K) Σ_k log p(x|h_k) − KL (analytic for L = 1, else MC)      Table 1 "VAE"
``iwae``           IWAE, α = 0, all K samples back-propagated                                  Table 1 "IWAE"
``vr_max``         VR-max by Algorithm 1: one backward pass through the max-weight sample      Table 1 "VR-max"
``vr_half``        VR-α at α = 0.5 (eq. 18), all samples back-propagated                        text "VR-0.5"
``iwae_single``    IWAE with one backward pass through a sample drawn ∝ w_k                     text "IWAE (single
                                                                                                backward pass)"
=================  ==========================================================================  ================

Architectures (Table 4, :func:`fyexp.models.build_vae`): Frey Face d200-d200-s20, softplus, Gaussian/Gaussian;
Caltech 101 Silhouettes d500-s200, tanh, Bernoulli/Gaussian; MNIST d200-d200-s50 (L = 1) and
d200-d200-s100-d100-d100-s50 (L = 2), tanh, Bernoulli/Gaussian.  MNIST is binarized stochastically: each training
batch draws x ∼ Bernoulli(gray levels); the test set is binarized once (seed 0).  Metric: ``test_loglik`` =
mean over test images of L̂_{0,S}(x) (S = 5,000, :func:`~fyexp.objectives.mc_log_likelihood`).

Figure 3: decoded samples of the VR-max models (artifacts ``samples-<cell>.npz``).  Figure 4: on ``bias_points``
test images of the Frey Face VAE (method ``vae``, fold 0), the bias L̂_{0,S} − L̂_{α,K} for α ∈ {0, −1, −5, −50,
−500} and K ∈ {5, 50}, mean and std over ``bias_repetitions`` draws (rows ``bias_mean`` / ``bias_std``).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np
import torch

from fyexp.data.caltech import load_caltech
from fyexp.data.freyface import HEIGHT as FREY_H
from fyexp.data.freyface import WIDTH as FREY_W
from fyexp.data.freyface import fold_split, load_freyface
from fyexp.data.vision import load_images
from fyexp.errors import CellFailed, FyexpError, require
from fyexp.experiments import Experiment, register
from fyexp.models import VAE, ModelConfig, build_vae
from fyexp.objectives import ELBO, IWAE, VR, mc_log_likelihood, vr_bound
from fyexp.objectives.single_backward import VRMaxSingle, VRSingle
from fyexp.results import Cell
from fyexp.train import OptimizerConfig, ScheduleConfig, TrainConfig, Trainer, VariationalTask, seed_everything

DATASETS = {"freyface": "Frey Face", "caltech": "Caltech 101 Silhouettes", "mnist": "MNIST"}
IMAGE_SHAPES = {"freyface": (FREY_H, FREY_W), "caltech": (28, 28), "mnist": (28, 28)}
#: method → (objective factory of K, paper table, paper row)
METHODS = {
    "vae": (lambda k: ELBO(n_samples=k), "1", "VAE"),
    "iwae": (lambda k: IWAE(n_samples=k), "1", "IWAE"),
    "vr_max": (lambda k: VRMaxSingle(n_samples=k), "1", "VR-max"),
    "vr_half": (lambda k: VR(n_samples=k, alpha=0.5), "text", "VR-0.5"),
    "iwae_single": (lambda k: VRSingle(n_samples=k, alpha=0.0), "text", "IWAE (single backward pass)"),
}


def model_config(dataset: str, layers: int) -> ModelConfig:
    """The VAE of Table 4 for ``dataset`` with ``layers`` stochastic layers."""
    if dataset == "freyface":
        return ModelConfig(latent=[20], encoder_hidden=[[200, 200]], decoder_hidden=[[200, 200]],
                           activation="softplus", observation="gaussian")
    if dataset == "caltech":
        return ModelConfig(latent=[200], encoder_hidden=[[500]], decoder_hidden=[[500]], activation="tanh")
    if layers == 1:
        return ModelConfig(latent=[50], encoder_hidden=[[200, 200]], decoder_hidden=[[200, 200]], activation="tanh")
    return ModelConfig(latent=[100, 50], encoder_hidden=[[200, 200], [100, 100]],
                       decoder_hidden=[[200, 200], [100, 100]], activation="tanh")


def parse_setting(text: str) -> tuple[str, int, int]:
    """``"mnist:2:50"`` → ("mnist", 2, 50)."""
    dataset, layers, k = text.split(":")
    return dataset, int(layers), int(k)


def _iwae_train() -> TrainConfig:
    return TrainConfig(epochs=3280, batch_size=20, optimizer=OptimizerConfig(lr=1e-3, betas=(0.99, 0.999), eps=1e-4),
                       schedule=ScheduleConfig(name="iwae", rounded=True))


@dataclass
class Config:
    """Settings ``"dataset:L:K"``, methods per setting, the training blocks per data set, evaluation."""

    settings: list[str] = field(default_factory=lambda: ["freyface:1:5", "caltech:1:5", "caltech:1:50", "mnist:1:5",
                                                         "mnist:1:50", "mnist:2:5", "mnist:2:50"])
    methods: list[str] = field(default_factory=lambda: ["vae", "iwae", "vr_max"])
    extra_methods: dict[str, list[str]] = field(default_factory=lambda: {
        "vr_half": ["freyface:1:5", "mnist:1:5"], "iwae_single": ["mnist:1:50"]})
    folds: list[int] = field(default_factory=lambda: list(range(10)))
    n_folds: int = 10
    fold_seed: int = 0
    train_freyface: TrainConfig = field(default_factory=lambda: TrainConfig(
        epochs=1000, batch_size=100, optimizer=OptimizerConfig(lr=5e-4)))
    train_caltech: TrainConfig = field(default_factory=lambda: dataclasses.replace(
        _iwae_train(), epochs=255, schedule=ScheduleConfig(name="iwae", rounded=True, stage_growth=2)))
    train_mnist: TrainConfig = field(default_factory=_iwae_train)
    n_train: dict[str, int] = field(default_factory=dict)  # cap on training images per data set (cpu profiles)
    n_test: dict[str, int] = field(default_factory=dict)  # cap on test images per data set
    # images held out from the END of the training part per data set, for choosing a stopping epoch on the VI
    # setting ("the learning rates and stopping epochs were tuned on the VI setting", VR §5.1): the cell then
    # reports the validation bound every ``valid_every`` epochs (``valid_bound``) and its argmax (``best_epoch``)
    validation: dict[str, int] = field(default_factory=dict)
    valid_every: int = 10
    test_samples: int = 5000
    test_chunk: int = 500
    test_batch: int = 100
    bias_alphas: list[float] = field(default_factory=lambda: [0.0, -1.0, -5.0, -50.0, -500.0])
    bias_samples: list[int] = field(default_factory=lambda: [5, 50])
    bias_points: int = 100
    bias_repetitions: int = 10
    n_figure_samples: int = 64

    def __post_init__(self):
        for s in self.settings + [s for v in self.extra_methods.values() for s in v]:
            try:
                d, layers, k = parse_setting(s)
            except ValueError:
                require(False, "settings", "entries 'dataset:L:K' (e.g. 'mnist:2:50')", s)
            require(d in DATASETS and layers in (1, 2) and k >= 1 and (layers == 1 or d == "mnist"), "settings",
                    f"data sets among {list(DATASETS)}, L = 1 or 2 (2 for MNIST only), K >= 1", s)
        for m in self.methods + list(self.extra_methods):
            require(m in METHODS, "methods", f"names among {list(METHODS)}", m)
        require(all(0 <= f < self.n_folds for f in self.folds), "folds", f"folds in 0..{self.n_folds - 1}", self.folds)
        require(self.test_samples >= 1 and self.test_chunk >= 1, "test_samples", "integers >= 1", self.test_samples)
        require(self.valid_every >= 1, "valid_every", "an integer >= 1", self.valid_every)
        for d, n in self.validation.items():
            require(d in DATASETS and isinstance(n, int) and n >= 1, "validation",
                    f"a mapping from data sets among {list(DATASETS)} to a number of images >= 1", {d: n})

    def train_config(self, dataset: str) -> TrainConfig:
        return getattr(self, f"train_{dataset}")


@dataclass
class VRData:
    train: torch.Tensor
    test: torch.Tensor
    binarize: bool
    valid: torch.Tensor | None = None


def load_data(config: Config, dataset: str, fold: int | None, root) -> VRData:
    """Training and test images of a cell (Frey Face: cross-validation fold ``fold``)."""
    root = None if root is None else str(root)
    if dataset == "freyface":
        train, test = fold_split(load_freyface(root), fold, config.n_folds, config.fold_seed)
        binarize = False
    elif dataset == "caltech":
        splits = load_caltech(root)
        train, test, binarize = splits.train, splits.test, False
    else:
        if root is None:
            raise FyexpError("MNIST needs a data root (pass --data-dir or FYEXP_DATA_DIR)")
        train, gray_test = load_images("MNIST", root, True), load_images("MNIST", root, False)
        test = torch.bernoulli(gray_test, generator=torch.Generator().manual_seed(0))
        binarize = True
    train = train[:config.n_train.get(dataset)]
    test = test[:config.n_test.get(dataset)]
    n_valid = config.validation.get(dataset, 0)
    if n_valid >= len(train):
        raise FyexpError(f"validation: {n_valid} images of {dataset} held out, but its training part has {len(train)}")
    if n_valid:
        return VRData(train[:-n_valid], test, binarize, train[-n_valid:])
    return VRData(train, test, binarize)


class BinarizingTask(VariationalTask):
    """:class:`VariationalTask` that draws x ∼ Bernoulli(gray levels) for every training batch (dynamic binarization)
    and, given held-out images, computes the training objective's bound on them every ``valid_every`` epochs."""

    def __init__(self, model, objective, binarize: bool, valid: torch.Tensor | None = None, valid_every: int = 1):
        super().__init__(model, objective, valid)
        self.binarize, self.valid_every = binarize, valid_every

    def validate(self, epoch: int) -> dict[str, float]:
        return super().validate(epoch) if epoch % self.valid_every == 0 else {}

    def loss(self, batch):
        x = batch[0] if isinstance(batch, (tuple, list)) else batch
        return super().loss((torch.bernoulli(x) if self.binarize else x,))


@torch.no_grad()
def prior_samples(model: VAE, n: int) -> torch.Tensor:
    """Decoded means E[x | h₁] of ancestral samples h_L ∼ N(0, I), h_{l} ∼ p(h_l | h_{l+1}); (n, D)."""
    device = next(model.parameters()).device
    decoders = model._decoders()
    top = decoders[-1].body[0].in_features  # the top latent's size
    h = torch.randn(n, top, device=device)
    for decoder in reversed(decoders[1:]):
        h = model.inner.posterior(*decoder(h)).sample()
    return model.observation.mean(model.decode(h))


@torch.no_grad()
def bias_curve(model: VAE, x: torch.Tensor, reference: torch.Tensor, alphas, ks, repetitions: int) -> list[dict]:
    """Figure 4: mean over points of L̂_{0,S}(x) − L̂_{α,K}(x), its mean and std over ``repetitions`` draws."""
    rows = []
    for k in ks:
        draws = torch.stack([model.log_weights(x, k) for _ in range(repetitions)])  # (R, K, N)
        for alpha in alphas:
            bias = (reference - torch.stack([vr_bound(d, alpha) for d in draws])).mean(-1)  # (R,)
            common = {"alpha": alpha, "K": k, "label": "Frey Face VAE, fold 0"}
            rows += [{"metric": "bias_mean", "value": float(bias.mean()), **common},
                     {"metric": "bias_std", "value": float(bias.std()), **common}]
    return rows


def stopping_rows(history: list[dict], setting: str, row: str, extra: dict) -> list[dict]:
    """The validation bound at each validated epoch (``valid_bound``) and the epoch that maximizes it
    (``best_epoch``): the stopping epoch "tuned on the VI setting" (VR §5.1) when the cell is the VAE."""
    curve = [(h["epoch"], -h["valid_loss"]) for h in history if "valid_loss" in h]
    if not curve:
        return []
    common = {"setting": setting, "label": row, **extra}
    best_epoch, best = max(curve, key=lambda point: point[1])
    return [{"metric": "valid_bound", "value": bound, "epoch": epoch, **common} for epoch, bound in curve] + [
        {"metric": "best_epoch", "value": float(best_epoch), **common},
        {"metric": "best_valid_bound", "value": best, **common}]


@register
class VRVAE(Experiment):
    name = "vr_vae"
    Config = Config

    def cells(self, config: Config, seeds):
        grid = []
        for s in dict.fromkeys(config.settings + [s for v in config.extra_methods.values() for s in v]):
            grid += [(m, s) for m in config.methods if s in config.settings]
            grid += [(m, s) for m, chosen in config.extra_methods.items() if s in chosen and m not in config.methods]
        cells = []
        for method, setting in grid:
            dataset, layers, k = parse_setting(setting)
            folds = config.folds if dataset == "freyface" else [None]
            for fold in folds:
                params = {"dataset": dataset, "L": layers, "K": k, **({"fold": fold} if fold is not None else {})}
                cells += [Cell(method, seed, params) for seed in seeds]
        return cells

    def cell_config(self, config: Config, cell: Cell) -> dict:
        """What a cell's numbers depend on (its settings, :func:`fyexp.settings.scoped_config`): its data set's
        training block, caps and held-out part, and the evaluation; not the grid listing (``settings``,
        ``methods``, ``extra_methods``, ``folds``: the cell's own values are its params) nor the other data sets'
        blocks; the fold split and Figure 4's settings for Frey Face only."""
        from fyexp.settings import jsonable

        dataset = cell.params["dataset"]
        data = jsonable(config)
        for key in ("settings", "methods", "extra_methods", "folds"):
            data.pop(key, None)
        for other in DATASETS:
            if other != dataset:
                data.pop(f"train_{other}", None)
        for key in ("n_train", "n_test", "validation"):
            data[key] = {d: n for d, n in data[key].items() if d == dataset}
        if dataset != "freyface":
            for key in ("n_folds", "fold_seed", "bias_alphas", "bias_samples", "bias_points", "bias_repetitions"):
                data.pop(key, None)
        return data

    def run_cell(self, config: Config, cell: Cell, ctx):
        p = cell.params
        dataset, layers, k, fold = p["dataset"], p["L"], p["K"], p.get("fold")
        data = load_data(config, dataset, fold, ctx.data_dir)
        seed_everything(cell.seed)
        model = build_vae(model_config(dataset, layers), data.train.shape[1])
        make_objective, table, row = METHODS[cell.method]
        task = BinarizingTask(model, make_objective(k), data.binarize, data.valid, config.valid_every)
        train = dataclasses.replace(config.train_config(dataset), seed=cell.seed)
        trainer = Trainer(train, device=ctx.device, work_dir=ctx.work_dir, subtask=ctx.subtask,
                          label=f"{ctx.experiment}/{cell.key}")
        history = trainer.fit(task, (data.train,))
        train_time = sum(h["epoch_time_s"] for h in history)

        model.eval()
        test = data.test.to(ctx.device)
        per_point = mc_log_likelihood(model, test, config.test_samples, config.test_chunk, config.test_batch)
        if not torch.isfinite(per_point).all():
            raise CellFailed(f"{cell.key}: non-finite test log-likelihood")
        setting = f"{DATASETS[dataset]} L={layers} K={k}"
        extra = {"L": layers, "K": k, "fold": fold if fold is not None else math.nan,
                 "n_test": len(test), "test_samples": config.test_samples}
        se = float(per_point.std()) / math.sqrt(len(per_point))
        rows = [{"paper": "vr", "table": table, "setting": setting, "paper_row": row, "metric": "test_loglik",
                 "value": float(per_point.mean()), "tolerance": 2 * se, **extra},
                {"metric": "train_time_s", "value": train_time, "setting": setting, "label": row, **extra},
                {"metric": "epoch_time_s", "value": train_time / max(len(history), 1), "setting": setting,
                 "label": row, **extra},
                {"metric": "final_train_bound", "value": -history[-1]["train_loss"], "setting": setting, "label": row,
                 **extra}]
        rows += stopping_rows(history, setting, row, extra)
        if cell.method == "vr_max" and fold in (None, 0):
            images = prior_samples(model, config.n_figure_samples).clamp(0, 1)
            ctx.artifact_dir.mkdir(parents=True, exist_ok=True)
            np.savez_compressed(ctx.artifact_dir / f"samples-{cell.key}.npz",
                                images=(images * 255).round().to(torch.uint8).cpu().numpy(),
                                shape=np.array(IMAGE_SHAPES[dataset]), setting=setting)
        if dataset == "freyface" and cell.method == "vae" and fold == 0:
            n = min(config.bias_points, len(test))
            rows += bias_curve(model, test[:n], per_point[:n], config.bias_alphas, config.bias_samples,
                               config.bias_repetitions)
        return rows
