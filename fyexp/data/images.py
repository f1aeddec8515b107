"""Images as the artifacts store them: intensities in [0, 1] → uint8 arrays."""

from __future__ import annotations

import numpy as np
import torch


def to_uint8(images: torch.Tensor, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """``round(255 · clamp(x, 0, 1))`` as uint8 on the CPU, reshaped to ``(-1, *shape)`` when ``shape`` is given
    (``(28, 28)`` for MNIST, ``(28, 20)`` for Frey Face); the clamp is a no-op for decoder means in [0, 1]."""
    out = (images.clamp(0, 1) * 255).round().to(torch.uint8)
    return (out.reshape(-1, *shape) if shape is not None else out).cpu().numpy()
