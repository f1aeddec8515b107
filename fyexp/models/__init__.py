"""Latent-variable models behind one protocol (:mod:`fyexp.models.latent`): ``terms(x, K)`` → LatentTerms,
``log_weights(x, K)`` → (K, B).

- :class:`VAE` / :func:`build_vae` (:class:`ModelConfig`, a spec's ``model:`` block): MLP encoders/decoders, one
  or two stochastic layers, Gaussian or β-Gaussian posterior (FY regularizer), Bernoulli / Gaussian /
  binary ρ′-entmax (2-entmax at ρ′ = 2) / multinomial / ρ′-entmax observation heads (:mod:`.heads`).
- :func:`build_nvdm`: NVDM and FY-NVDM (:mod:`.nvdm`, with RE, perplexity and topic-word weights).
- :func:`~fyexp.models.fy_vae.build_fy_vae`: FYVI's MLP β-VAE (:mod:`.fy_vae`, with its decoded prior samples).
- :class:`LinearGaussian`: a closed-form linear-Gaussian model (exact log p(x), exact and fractional posteriors).

A new model subclasses :class:`LatentVariableModel` and implements ``terms``.
"""

from fyexp.models.base import LatentVariableModel
from fyexp.models.linear_gaussian import LinearGaussian
from fyexp.models.nvdm import build_nvdm
from fyexp.models.vae import VAE, ModelConfig, build_vae

__all__ = ["LatentVariableModel", "VAE", "ModelConfig", "build_vae", "build_nvdm", "LinearGaussian"]
