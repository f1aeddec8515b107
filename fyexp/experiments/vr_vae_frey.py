r"""The Frey Face protocol of the VR authors' code, as the vr-vae runner applies it (spec block ``freyface:``).

The only code of the authors that trains the Frey Face VAE with VR-α and with the max backward pass is
YingzhenLi/VRbound ``vae_autograd/`` (``aae_reparam.py``, ``network_layer.py``, ``parameter_server.py``,
``demo/train_freyface.py``); each setting below names where it is read there.  The dataclass's defaults are the
settings our runner used before it followed that code (so a committed row of a spec without ``freyface:`` is
compared with those); ``experiments/vr-vae.yaml`` sets the authors' values.  The settings are
:class:`~fyexp.experiments.vr_vae_config.FreyProtocol` (in the light config module); this module holds what they
do to a model and a task.

* ``mean``: ``sigmoid``, the decoder's mean is σ(a) (``network_layer.py``, ``_encode``: ``mu_out =
  sigmoid(mu_out)`` when the prefix is ``'p'``), its log-variance a linear output of the last hidden layer
  (``log_sigma_out = 0.5 * (Wsig h + bsig)``: log σ² = Wsig h + bsig);  ``linear``: the mean is a (ours before).
* ``init_std``: every weight and bias ~ N(0, init_std²), 0.01 (``parameter_server.py``, ``add_params``:
  ``sigmaInit = 0.01``); ``None``: torch's default initialization.
* ``weight_prior`` c: each step adds −c · W · M / N to the gradient of every weight matrix W (not the biases) of
  the minibatch's *summed* bound (``parameter_server.py``, ``update``: ``prior = 0.5 * params[key]``,
  ``gradients[key] -= prior * (M / N)``; c = 0.5), M the batch size, N the training set's.  Divided by M, our
  loss −(1/M) Σ_i bound_i gets the penalty (c / 2N) Σ_W ‖W‖² (:func:`weight_penalty`), with the same gradient.
  In the authors' runs the term is zero: M = ``minibatch.shape[0]`` and N = ``X.shape[0]`` are ints
  (``aae_reparam.py``, ``_updateParams`` and ``fit``) and the code is Python 2, so ``M / N`` = 100 // 1768 = 0;
  the spec sets c = 0, and c > 0 is the term as written, read with true division.
* ``splits`` / ``train_fraction``: :func:`fyexp.data.vr_images.load_data`.
* ``elbo``: ``mc``, the VAE's bound is (1/K) Σ_k log w_k, its KL term a Monte Carlo estimate (``aae_reparam.py``,
  ``_lowerbound`` at α = 1: ``np.sum(logF[...]) / num_samples``); ``analytic``: the closed-form KL.
"""

from __future__ import annotations

import torch
from torch import nn

from fyexp.experiments.vr_vae_config import FreyProtocol
from fyexp.train.binarizing import BinarizingTask


@torch.no_grad()
def normal_init(model: nn.Module, std: float) -> nn.Module:
    """Every parameter of ``model`` drawn from N(0, std²), in ``model.parameters()`` order, from torch's global RNG."""
    for p in model.parameters():
        p.normal_(0.0, std)
    return model


def weight_penalty(model: nn.Module, coefficient: float, n_train: int) -> torch.Tensor:
    """(c / 2N) Σ_W ‖W‖² over the weight matrices (parameters of two or more dimensions) of ``model``: the
    authors' gradient term −c · W · M / N on a summed bound, per data point."""
    return coefficient / (2 * n_train) * sum(p.pow(2).sum() for p in model.parameters() if p.dim() >= 2)


class WeightPriorTask(BinarizingTask):
    """:class:`BinarizingTask` whose loss adds :func:`weight_penalty` (``coefficient`` c, ``n_train`` N); the
    penalty is logged as ``weight_penalty``; validation reports the objective alone."""

    def __init__(self, *args, coefficient: float, n_train: int, **kwargs):
        super().__init__(*args, **kwargs)
        self.coefficient, self.n_train = coefficient, n_train

    def loss(self, batch):
        loss, parts = super().loss(batch)
        penalty = weight_penalty(self.model, self.coefficient, self.n_train)
        return loss + penalty, {**parts, "weight_penalty": penalty.detach()}


__all__ = ["WeightPriorTask", "normal_init", "weight_penalty"]
