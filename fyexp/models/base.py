"""The base class of fyexp's latent-variable models (the protocol of :mod:`fyexp.objectives`)."""

from __future__ import annotations

from torch import Tensor, nn

from fyexp.models.latent import LatentTerms


class LatentVariableModel(nn.Module):
    """A model with ``terms(x, K)`` → :class:`LatentTerms`; ``log_weights(x, K)`` follows, shape (K, B)."""

    def terms(self, x: Tensor, n_samples: int) -> LatentTerms:
        raise NotImplementedError

    def log_weights(self, x: Tensor, n_samples: int) -> Tensor:
        """log p(x, z_k) − log q(z_k | x) for K = ``n_samples`` posterior samples, shape (K, B)."""
        return self.terms(x, n_samples).log_weights()
