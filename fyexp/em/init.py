r"""Initial mixture parameters.

:func:`authors_torch_init` is the initialisation of the FYVI authors' notebooks (docs/protocols.md, "FYVI Table 1:
FY-EM on Gaussian mixtures"), which FYVI App. B describes as "randomly initialized from a uniform distribution in [0, 0.1]":
after ``torch.manual_seed(seed)``, means :math:`\mu = U[0,1)^{K\times d} \cdot 0.1`,
:math:`A = U[0,1)^{K\times d\times d}\cdot 0.1`, :math:`\Sigma_k = A_k A_k^\top + I`, uniform :math:`\pi`.
"""

from __future__ import annotations

import numpy as np
import torch

from fyexp.em.gaussian import MixtureParams

__all__ = ["authors_torch_init"]


def authors_torch_init(seed: int, n_components: int, dim: int, skip: int = 0, scale: float = 0.1) -> MixtureParams:
    """The notebooks' torch-seeded draw; ``skip`` throw-away (means, A) pairs are drawn first.

    The sparse-EM notebook draws one pair that it never uses before the one it uses (``skip=1``).  The global
    torch generator is reseeded (as the notebooks do) and restored afterwards.
    """
    state = torch.random.get_rng_state()
    try:
        torch.manual_seed(seed)
        for _ in range(skip + 1):
            means = torch.rand(n_components, dim) * scale
            factor = torch.rand(n_components, dim, dim) * scale
    finally:
        torch.random.set_rng_state(state)
    covariances = factor @ factor.transpose(1, 2) + torch.eye(dim)
    return MixtureParams(weights=np.full(n_components, 1.0 / n_components),
                         means=means.double().numpy(), covariances=covariances.double().numpy())
