"""Adam as the IWAE code writes it (Burda et al.'s ``yburda/iwae``, ``optimizers.py`` lines 10–37), which trained
the VR paper's MNIST and Caltech 101 Silhouettes models (VRbound ``tex/appendix/exp_details.tex`` line 13: "the same
settings as" the IWAE paper's).

It differs from Kingma & Ba's Adam (``torch.optim.Adam``) in three places, each read from that file:

* the second moments start at **one**, not zero (``shared_ones_like``, line 15), the first at zero (line 14);
* the timestep starts at **one** (``timestep=1``, lines 10 and 16) and the step size is
  α_t = lr · √(1 − β₂^t) / (1 − β₁^t) (line 30);
* the parameters move with the moments **before** this step's gradient (lines 32–33 read the shared moments whose
  updates, lines 22–28, Theano applies in the same call, simultaneously):

      x ← x − α_t · m_{t−1} / (√v_{t−1} + ε),   then   m ← β₁ m + (1 − β₁) G,  v ← β₂ v + (1 − β₂) G²,  t ← t + 1,

  so the first step does not move the parameters.

G is the gradient of the **minibatch sum** of the per-point bound (``iwae.py``'s ``gradIminibatch_srng`` sums over
the minibatch), where fyexp's losses are minibatch means: with v₀ = 1 and ε = 1e-4 the update is not invariant to
that scale, so this optimizer multiplies the gradient by ``summed_over`` (the batch size, which
:func:`fyexp.train.config.make_optimizer` is given) before it enters the moments.  The IWAE code ascends the bound
(``param + ...``); fyexp descends the negative bound: the same step.  Their arithmetic is Theano's ``floatX``;
ours is the parameters' dtype.
"""

from __future__ import annotations

import math
from typing import Iterable

import torch


class IWAEAdam(torch.optim.Optimizer):
    """The IWAE code's Adam (the module docstring); ``summed_over``: the factor from a mean loss's gradient to the
    summed loss's (the batch size)."""

    def __init__(self, params: Iterable[torch.nn.Parameter], lr: float = 1e-3, betas: tuple[float, float] = (0.99, 0.999),
                 eps: float = 1e-4, summed_over: float = 1.0):
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps, "summed_over": float(summed_over)})

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = torch.tensor(1.0)               # the timestep starts at one
                    state["exp_avg"] = torch.zeros_like(p)          # m_0 = 0
                    state["exp_avg_sq"] = torch.ones_like(p)        # v_0 = 1
                t = float(state["step"])
                alpha = group["lr"] * math.sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
                m, v = state["exp_avg"], state["exp_avg_sq"]
                p.addcdiv_(m, v.sqrt().add_(group["eps"]), value=-alpha)   # with the moments before this gradient
                g = p.grad * group["summed_over"]
                m.mul_(beta1).add_(g, alpha=1 - beta1)
                v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
                state["step"] += 1
        return loss
