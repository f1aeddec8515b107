"""Objectives: a model and a batch → the bound per data point (to maximise) and named parts to log.

Each objective is a small frozen dataclass with ``n_samples`` (K) and a ``bound(terms)`` method that applies one
function of :mod:`fyexp.objectives.bounds` to :class:`~fyexp.models.latent.LatentTerms`; calling it on
``(model, x)`` draws the K samples.  :func:`make_objective` builds one from spec values
(``objective: {name: vr, alpha: 0.5, n_samples: 5}``).  The training loss of
:class:`fyexp.train.VariationalTask` is ``−bound.mean()`` over the batch.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, ClassVar

from torch import Tensor

from fyexp.core.errors import ConfigValueError
from fyexp.objectives import bounds
from fyexp.models.latent import LatentModel, LatentTerms


@dataclass(frozen=True)
class Objective:
    """Base class: ``objective(model, x)`` → (bound per data point (B,), parts to log (batch means))."""

    name: ClassVar[str] = ""
    n_samples: int = 1

    def __post_init__(self):
        if not (isinstance(self.n_samples, int) and self.n_samples >= 1):
            raise ConfigValueError("n_samples", "an integer >= 1", self.n_samples)

    def bound(self, terms: LatentTerms) -> Tensor:
        raise NotImplementedError

    def parts(self, terms: LatentTerms) -> dict[str, Tensor]:
        """Named quantities to log besides the bound (batch means)."""
        return {}

    def __call__(self, model: LatentModel, x: Tensor) -> tuple[Tensor, dict[str, Tensor]]:
        terms = model.terms(x, self.n_samples)
        return self.bound(terms), self.parts(terms)


@dataclass(frozen=True)
class ELBO(Objective):
    """The β-ELBO (FYVI eq. 25): analytic divergence when the model has one and ``analytic``, else Monte Carlo.

    With an FY model (FY observation loss, β-Gaussian FY regularizer) this is the FY β-ELBO
    (:func:`~fyexp.objectives.bounds.fy_elbo`).
    """

    name: ClassVar[str] = "elbo"
    beta: float = 1.0
    analytic: bool = True

    def _divergence(self, terms: LatentTerms) -> Tensor:
        if self.analytic and terms.divergence is not None:
            return terms.divergence
        return terms.mc_divergence()

    def bound(self, terms: LatentTerms) -> Tensor:
        return bounds.elbo_analytic(terms.log_likelihood, self._divergence(terms), self.beta)

    def parts(self, terms: LatentTerms) -> dict[str, Tensor]:
        return {"reconstruction": -terms.log_likelihood.detach().mean(),
                "divergence": self._divergence(terms).detach().mean()}


@dataclass(frozen=True)
class VR(Objective):
    """The VR bound L̂_{α,K} (Li & Turner eq. 18) for any real α; α = 1 the ELBO, α = −inf VR-max."""

    name: ClassVar[str] = "vr"
    alpha: float = 0.5

    def bound(self, terms: LatentTerms) -> Tensor:
        return bounds.vr_bound(terms.log_weights(), self.alpha)


@dataclass(frozen=True)
class IWAE(Objective):
    """IWAE's bound L̂_K (the VR bound at α = 0)."""

    name: ClassVar[str] = "iwae"

    def bound(self, terms: LatentTerms) -> Tensor:
        return bounds.iwae_bound(terms.log_weights())


@dataclass(frozen=True)
class VRMax(Objective):
    """VR-max (Algorithm 1, α = −∞): only the largest-weight sample is back-propagated."""

    name: ClassVar[str] = "vr_max"

    def bound(self, terms: LatentTerms) -> Tensor:
        return bounds.vr_max_bound(terms.log_weights())


@dataclass(frozen=True)
class Fractional(Objective):
    """The fractional bound L_γ (Chai & Bonilla eq. 1) with its Monte Carlo Z estimates; γ = 1 the ELBO."""

    name: ClassVar[str] = "fractional"
    gamma: float = 0.5

    def __post_init__(self):
        super().__post_init__()
        if not 0.0 < self.gamma <= 1.0:
            raise ConfigValueError("gamma", "a number in (0, 1]", self.gamma)

    def bound(self, terms: LatentTerms) -> Tensor:
        if terms.log_prior is None or terms.log_q is None:
            raise ValueError("the fractional bound needs the prior and posterior densities")
        return bounds.fractional_bound(terms.log_likelihood, terms.log_prior, terms.log_q, self.gamma)


OBJECTIVES: dict[str, type[Objective]] = {cls.name: cls for cls in (ELBO, VR, IWAE, VRMax, Fractional)}


def make_objective(name: str, **params: Any) -> Objective:
    """The objective ``name`` (one of :data:`OBJECTIVES`) with its parameters, e.g. ``make_objective('vr', alpha=0.5,
    n_samples=5)``; ``alpha: -inf`` (or ``'-inf'``) gives VR-max.  Raises :class:`ConfigValueError` on a bad value."""
    if name not in OBJECTIVES:
        raise ConfigValueError("objective.name", f"one of {sorted(OBJECTIVES)}", name)
    cls = OBJECTIVES[name]
    known = {f.name for f in dataclasses.fields(cls)}
    for key in params:
        if key not in known:
            raise ConfigValueError(f"objective.{key}", f"one of the parameters {sorted(known)} of '{name}'", key)
    if name == "vr" and isinstance(params.get("alpha"), str):
        params = {**params, "alpha": float(params["alpha"])}
    if name == "vr" and params.get("alpha") == -math.inf:
        params = {k: v for k, v in params.items() if k != "alpha"}
        return VRMax(**params)
    return cls(**params)
