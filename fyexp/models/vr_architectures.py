"""The VAEs of Li & Turner Table 4 (VR App. D), one :class:`~fyexp.models.ModelConfig` per (data set, L).

"d200-d200-s20" is one encoder of two deterministic layers of 200 units and a stochastic layer of 20; the decoders
mirror the encoders.  Frey Face: softplus, Gaussian p(x | h); Caltech 101 Silhouettes and MNIST: tanh, Bernoulli
p(x | h); every q(h | x) Gaussian.  The report renders Table 4 from these (:mod:`fyexp.report.architectures`).
"""

from __future__ import annotations

import copy

from fyexp.models.vae import ModelConfig

#: (data set, stochastic layers L) → the ModelConfig keywords of Table 4
TABLE4: dict[tuple[str, int], dict] = {
    ("freyface", 1): dict(latent=[20], encoder_hidden=[[200, 200]], decoder_hidden=[[200, 200]],
                          activation="softplus", observation="gaussian"),
    ("caltech", 1): dict(latent=[200], encoder_hidden=[[500]], decoder_hidden=[[500]], activation="tanh"),
    ("mnist", 1): dict(latent=[50], encoder_hidden=[[200, 200]], decoder_hidden=[[200, 200]], activation="tanh"),
    ("mnist", 2): dict(latent=[100, 50], encoder_hidden=[[200, 200], [100, 100]],
                       decoder_hidden=[[200, 200], [100, 100]], activation="tanh"),
}


def model_config(dataset: str, layers: int) -> ModelConfig:
    """The VAE of Table 4 for ``dataset`` with ``layers`` stochastic layers."""
    return ModelConfig(**copy.deepcopy(TABLE4[(dataset, layers)]))


__all__ = ["TABLE4", "model_config"]
