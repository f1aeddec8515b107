r"""The bars test (Földiák 1990; for binary sparse coding Henniges et al. 2010) and the four patterns of Lücke 2019,
Figure 1.

Bars: on a :math:`B \times B` image (:math:`D = B^2` pixels) the :math:`H = 2B` generating fields are the
:math:`B` horizontal and :math:`B` vertical bars of height ``amplitude``; data are drawn from binary sparse coding
(:mod:`fyexp.data.bsc`) with these fields, :math:`\pi` and :math:`\sigma`.

Figure 1: ``cross``, ``columns``, ``triangle``, ``circle`` as 0/1 images on an :math:`n \times n` grid, drawn from
their geometry (the paper shows them but gives no pixel values).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fyexp.data.bsc import BSCParams, sample_data

__all__ = ["BarsSpec", "BarsData", "bars_dictionary", "make_bars", "match_fields", "FIGURE1_PATTERNS", "figure1_patterns",
           "figure1_data_point"]


def bars_dictionary(size: int, amplitude: float = 1.0) -> np.ndarray:
    """The :math:`2B` bars as columns of ``W`` (B², 2B): horizontal bars first (row ``h``), then vertical bars."""
    fields = np.zeros((2 * size, size, size))
    for b in range(size):
        fields[b, b, :] = amplitude
        fields[size + b, :, b] = amplitude
    return fields.reshape(2 * size, size * size).T


@dataclass(frozen=True)
class BarsSpec:
    """Generating model of the bars test: grid side ``size``, bar height, :math:`\\pi`, :math:`\\sigma`, N, seed."""

    size: int = 5
    amplitude: float = 10.0
    pi: float | None = None  # None: 2/H, two bars per image on average
    sigma: float = 2.0
    n_points: int = 1000
    seed: int = 0

    @property
    def n_bars(self) -> int:
        return 2 * self.size

    @property
    def params(self) -> BSCParams:
        pi = 2.0 / self.n_bars if self.pi is None else self.pi
        return BSCParams(W=bars_dictionary(self.size, self.amplitude), sigma2=self.sigma ** 2, pi=pi)


@dataclass(frozen=True)
class BarsData:
    Y: np.ndarray  # (N, B²)
    S: np.ndarray  # (N, 2B) the bars that generated each image
    truth: BSCParams


def make_bars(spec: BarsSpec) -> BarsData:
    """Draw ``spec.n_points`` images from BSC with the bars dictionary (``numpy.random.default_rng(seed)``)."""
    truth = spec.params
    Y, S = sample_data(truth, spec.n_points, np.random.default_rng(spec.seed))
    return BarsData(Y=Y, S=S, truth=truth)


def match_fields(learned: np.ndarray, truth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pair each true field (column of ``truth``, D × H) with one learned field (column of ``learned``) so that the
    summed cosine similarity is largest (Hungarian assignment); returns ``(index, cosine)``, each (H,): the learned
    column matched to true field ``h`` and their cosine similarity.  A bar counts as recovered when its cosine is at
    least a threshold (the runner's ``recovery_threshold``)."""
    from scipy.optimize import linear_sum_assignment

    def unit(a):
        norms = np.linalg.norm(a, axis=0, keepdims=True)
        return a / np.where(norms > 0, norms, 1.0)

    cosine = unit(truth).T @ unit(learned)  # (H_true, H_learned)
    rows, cols = linear_sum_assignment(-cosine)
    index = np.empty(truth.shape[1], dtype=int)
    index[rows] = cols
    return index, cosine[np.arange(truth.shape[1]), index]


FIGURE1_PATTERNS = ("cross", "columns", "triangle", "circle")


def figure1_patterns(size: int = 12) -> np.ndarray:
    """The four 0/1 patterns of Figure 1 on a ``size`` × ``size`` grid, shape (4, size, size), in the order of
    :data:`FIGURE1_PATTERNS`: a diagonal cross, two vertical columns, a filled triangle, a ring."""
    rows, cols = np.mgrid[0:size, 0:size]
    cross = (np.abs(rows - cols) <= 1) | (np.abs(rows + cols - (size - 1)) <= 1)
    u, v = (rows + 0.5) / size, (cols + 0.5) / size  # pixel centres in (0, 1)
    width = 1.0 / size
    columns = (np.abs(v - 0.25) < 1.5 * width) | (np.abs(v - 0.75) < 1.5 * width)
    triangle = (u > 0.2) & (u < 0.85) & (np.abs(v - 0.5) < 0.5 * (u - 0.2) / 0.65 * 0.8)
    radius = np.hypot(u - 0.5, v - 0.5)
    circle = np.abs(radius - 0.33) < 0.9 * width
    return np.stack([cross, columns, triangle, circle]).astype(float)


def figure1_data_point(size: int, pair, sigma: float, pi: float,
                       noise_seed: int) -> tuple[BSCParams, np.ndarray, np.ndarray]:
    r"""Figure 1's model and data point: BSC with the four patterns (:func:`figure1_patterns`) as fields ``W``
    (size², 4), :math:`\sigma` and :math:`\pi`; the generating state :math:`\vec s^*` (1 for the names in ``pair``);
    the image :math:`\vec y = W\vec s^* + \sigma\epsilon`, :math:`\epsilon \sim \mathcal N(0, I)` drawn with
    ``numpy.random.default_rng(noise_seed)``.  Returns ``(params, s*, y)``."""
    patterns = figure1_patterns(size)
    params = BSCParams(W=patterns.reshape(len(patterns), -1).T, sigma2=sigma ** 2, pi=pi)
    truth = np.array([name in pair for name in FIGURE1_PATTERNS], dtype=np.uint8)
    rng = np.random.default_rng(noise_seed)
    return params, truth, params.W @ truth + sigma * rng.standard_normal(params.n_observed)
