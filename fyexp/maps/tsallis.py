r"""The Tsallis :math:`\rho`-negentropy, its prediction map (:math:`\rho`-entmax), conjugate and inverse link.

Notation of FYVI §2.3 (eq. 6–8).  For scores :math:`\theta \in \mathbb{R}^K` and :math:`\rho > 0`,

.. math::

    \Omega_\rho(p) = \frac{\sum_k p_k^\rho - 1}{\rho(\rho - 1)} \quad (\rho \ne 1), \qquad
    \Omega_1(p) = \sum_k p_k \log p_k,

    \Pi_{\Omega_\rho}(\theta) = \operatorname*{arg\,max}_{p \in \Delta_K} \langle p, \theta\rangle - \Omega_\rho(p),
    \qquad \Omega_\rho^*(\theta) = \max_{p \in \Delta_K} \langle p, \theta\rangle - \Omega_\rho(p).

The maximiser has the closed form (FYVI eq. 10; Peters et al. 2019)

.. math::

    p_k = \big[(\rho - 1)\theta_k - \tau\big]_+^{1/(\rho - 1)},

with the threshold :math:`\tau` fixed by :math:`\sum_k p_k = 1`.  For :math:`\rho > 1` some :math:`p_k` may be exactly
zero (sparsemax at :math:`\rho = 2`); for :math:`\rho < 1` the exponent is negative, every :math:`p_k > 0` and the map
is *denser* than softmax (as :math:`\rho \to 0`, :math:`\Omega_\rho` tends, up to a constant, to the
log-barrier :math:`-\sum_k \log p_k`).  In the scaled, max-shifted
variable :math:`u = (\rho-1)(\theta - \max\theta)`, :math:`\tau` lies between
:math:`\tau_a = -1` (where the largest term alone is 1, so the sum is :math:`\ge 1`) and
:math:`\tau_b = -K^{1-\rho}` (where every term is :math:`\le 1/K`, so the sum is :math:`\le 1`), for any
:math:`\rho \ne 1`; :func:`tsallis_bisect` bisects that bracket.

``rho`` is the ``alpha`` of the ``entmax`` package.  :func:`tsallis_entmax` dispatches to the exact maps where they
exist (softmax; ``entmax.entmax15`` and ``entmax.sparsemax``, both sort-based) and to :func:`tsallis_bisect`
otherwise.  All functions are differentiable torch functions and work in float32 or float64.
"""

from __future__ import annotations

import math

import torch
from entmax import entmax15, sparsemax
from torch import Tensor

__all__ = ["tsallis_entmax", "tsallis_bisect", "tsallis_negentropy", "tsallis_conjugate", "tsallis_log"]


def _check_rho(rho: float) -> None:
    if not (rho > 0 and math.isfinite(rho)):
        raise ValueError(f"the entropic index rho must be a finite number > 0, got {rho!r}")


def _default_tol(dtype: torch.dtype) -> float:
    return 8 * torch.finfo(dtype).eps


class _TsallisBisect(torch.autograd.Function):
    r"""Bisection on the threshold :math:`\tau`, with the closed-form Jacobian in the backward pass.

    Differentiating :math:`p_k = [(\rho-1)\theta_k - \tau]_+^{1/(\rho-1)}` under :math:`\sum_k p_k = 1` gives
    :math:`J = \operatorname{diag}(s) - s s^\top / \sum_k s_k` with :math:`s_k = p_k^{2-\rho}` on the support
    (0 off it), so :math:`J^\top g = s \odot g - s \, \langle s, g \rangle / \sum_k s_k`.
    """

    @staticmethod
    def forward(ctx, scores: Tensor, rho: float, dim: int, tol: float, max_iter: int) -> Tensor:
        k = scores.shape[dim]
        u = (rho - 1.0) * (scores - scores.amax(dim=dim, keepdim=True))
        exponent = 1.0 / (rho - 1.0)
        tau_a = torch.full_like(u.narrow(dim, 0, 1), -1.0)  # sum of the terms >= 1 here
        width = 1.0 - k ** (1.0 - rho)  # tau_b - tau_a; negative when rho < 1
        n_halvings = min(max_iter, max(1, math.ceil(math.log2(max(abs(width), tol) / tol))))
        p, tau_m, total = torch.empty_like(u), torch.empty_like(tau_a), torch.empty_like(tau_a)
        for _ in range(n_halvings):  # in place: at EM sizes (N x 4) allocation costs as much as the pow
            width /= 2.0
            torch.add(tau_a, width, out=tau_m)
            torch.sub(u, tau_m, out=p).clamp_(min=0.0).pow_(exponent)
            torch.sum(p, dim=dim, keepdim=True, out=total)
            # keep tau_a on the side where the sum is >= 1 (the sum is monotone in tau)
            tau_a = torch.where(total >= 1.0, tau_m, tau_a)
        p = torch.clamp(u - (tau_a + width / 2.0), min=0.0) ** exponent
        p = p / p.sum(dim=dim, keepdim=True)
        ctx.save_for_backward(p)
        ctx.rho, ctx.dim = rho, dim
        return p

    @staticmethod
    def backward(ctx, grad_output: Tensor):
        (p,) = ctx.saved_tensors
        s = torch.where(p > 0, p ** (2.0 - ctx.rho), torch.zeros_like(p))
        sg = s * grad_output
        grad = sg - s * (sg.sum(dim=ctx.dim, keepdim=True) / s.sum(dim=ctx.dim, keepdim=True))
        return grad, None, None, None, None


def tsallis_bisect(scores: Tensor, rho: float, dim: int = -1, tol: float | None = None,
                   max_iter: int = 200) -> Tensor:
    r"""Solve :math:`\max_{p \in \Delta_K} \langle p, \theta\rangle - \Omega_\rho(p)` by bisection on :math:`\tau`.

    Works for every :math:`\rho > 0`, :math:`\rho \ne 1`, including :math:`\rho < 1`.  The bracket on the scaled
    threshold (module docstring) has width :math:`|1 - K^{1-\rho}|`; it is halved until it is at most ``tol``
    (default :math:`8\,\varepsilon` of the dtype, i.e. about 1.8e-15 in float64, 9.5e-7 in float32) or
    ``max_iter`` times, and the result is renormalised to sum to one.  For :math:`\rho \le 2` the error in
    :math:`p` is then of order ``tol``:math:`/|\rho - 1|`; for :math:`\rho > 2`, :math:`p_k` is only Hölder
    continuous in :math:`\tau` at the edge of the support, so entries near zero can be off by up to
    ``tol``:math:`^{1/(\rho-1)}`.

    Parameters
    ----------
    scores : Tensor, shape (..., K, ...)
        Scores :math:`\theta`; entries may be ``-inf`` (never selected) as long as one per slice is finite.
    rho : float
        Entropic index :math:`\rho > 0`, :math:`\rho \ne 1`.
    dim : int
        Dimension of the simplex.

    Returns
    -------
    Tensor, same shape as ``scores``: points of the simplex along ``dim``.
    """
    _check_rho(rho)
    if rho == 1.0:
        raise ValueError("tsallis_bisect needs rho != 1 (rho = 1 is softmax: use tsallis_entmax)")
    tol = _default_tol(scores.dtype) if tol is None else tol
    return _TsallisBisect.apply(scores, float(rho), dim, float(tol), int(max_iter))


def tsallis_entmax(scores: Tensor, rho: float, dim: int = -1, tol: float | None = None) -> Tensor:
    r""":math:`\rho`-entmax, the :math:`\Omega_\rho`-regularised prediction map :math:`\Pi_{\Omega_\rho}` (FYVI eq. 7).

    .. math::

        \Pi_{\Omega_\rho}(\theta) = \operatorname*{arg\,max}_{p \in \Delta_K} \langle p, \theta\rangle
        - \Omega_\rho(p).

    Exact for :math:`\rho = 1` (softmax), :math:`\rho = 3/2` (``entmax.entmax15``, sort-based) and :math:`\rho = 2`
    (``entmax.sparsemax``, the Euclidean projection onto the simplex); any other :math:`\rho > 0` by
    :func:`tsallis_bisect` to tolerance ``tol``.

    Parameters
    ----------
    scores : Tensor, shape (..., K, ...)
    rho : float
        Entropic index :math:`\rho > 0`.
    dim : int
        Dimension of the simplex.
    """
    _check_rho(rho)
    if rho == 1.0:
        return torch.softmax(scores, dim=dim)
    if rho == 1.5:
        return entmax15(scores, dim=dim)
    if rho == 2.0:
        return sparsemax(scores, dim=dim)
    return tsallis_bisect(scores, rho, dim=dim, tol=tol)


def _xlogx(p: Tensor) -> Tensor:
    return torch.where(p > 0, p * torch.log(torch.where(p > 0, p, torch.ones_like(p))), torch.zeros_like(p))


def tsallis_negentropy(p: Tensor, rho: float, dim: int = -1) -> Tensor:
    r"""Tsallis :math:`\rho`-negentropy (FYVI eq. 8) of points ``p`` of the simplex along ``dim``.

    :math:`\Omega_\rho(p) = (\sum_k p_k^\rho - 1)/(\rho(\rho-1))`; at :math:`\rho = 1` the Shannon negentropy
    :math:`\sum_k p_k \log p_k`.  Zero entries contribute :math:`0^\rho = 0`.  Convex on the simplex for every
    :math:`\rho > 0`.
    """
    _check_rho(rho)
    if rho == 1.0:
        return _xlogx(p).sum(dim=dim)
    powered = torch.where(p > 0, p.clamp(min=0) ** rho, torch.zeros_like(p))
    return (powered.sum(dim=dim) - 1.0) / (rho * (rho - 1.0))


def tsallis_conjugate(scores: Tensor, rho: float, dim: int = -1, p: Tensor | None = None) -> Tensor:
    r"""Fenchel conjugate :math:`\Omega_\rho^*(\theta) = \langle p^\star, \theta\rangle - \Omega_\rho(p^\star)`.

    :math:`p^\star = \Pi_{\Omega_\rho}(\theta)`, computed unless given as ``p``; its gradient is :math:`p^\star`
    (Danskin).  At :math:`\rho = 1` it is :math:`\operatorname{logsumexp}(\theta)`.  Scores of ``-inf`` with
    :math:`p^\star_k = 0` contribute nothing.

    Returns
    -------
    Tensor, the shape of ``scores`` without ``dim``.
    """
    p = tsallis_entmax(scores, rho, dim=dim) if p is None else p
    inner = torch.where(p > 0, p * torch.where(p > 0, scores, torch.zeros_like(scores)), torch.zeros_like(p))
    return inner.sum(dim=dim) - tsallis_negentropy(p, rho, dim=dim)


def tsallis_log(p: Tensor, rho: float) -> Tensor:
    r"""The :math:`(2-\rho)`-logarithm :math:`\ln_{2-\rho}(p) = (p^{\rho-1} - 1)/(\rho - 1)`; :math:`\log p` at 1.

    This is the prior update of FYVI eq. 15: for a full-support :math:`\bar q`, :math:`\eta = \ln_{2-\rho}(\bar q)`
    satisfies :math:`\Pi_{\Omega_\rho}(\eta) = \bar q`, i.e. it minimises :math:`\Omega_\rho^*(\eta) - \langle \bar q,
    \eta\rangle`.  Up to the constant :math:`1/(\rho-1)`, to which :math:`\Pi_{\Omega_\rho}` is blind, it is the
    :math:`\pi_k^{\rho-1}/(\rho-1)` of FYVI eq. 21, and it is continuous in :math:`\rho` at 1.
    """
    _check_rho(rho)
    if rho == 1.0:
        return torch.log(p)
    return (p ** (rho - 1.0) - 1.0) / (rho - 1.0)
