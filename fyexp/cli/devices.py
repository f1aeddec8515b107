"""Choosing the compute device: ``auto`` is CUDA when torch sees a GPU, else the CPU."""

from __future__ import annotations

from fyexp.core.errors import FyexpError

DEVICE_CHOICES = ("auto", "cpu", "cuda")


def resolve_device(requested: str) -> str:
    """Map ``auto|cpu|cuda`` to a torch device string, failing clearly when CUDA is asked for but absent."""
    if requested not in DEVICE_CHOICES:
        raise FyexpError(f"--device: expected one of {', '.join(DEVICE_CHOICES)}, got '{requested}'")
    if requested == "cpu":
        return "cpu"
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if requested == "cuda":
        raise FyexpError("--device cuda: torch sees no CUDA device on this machine (use --device auto or cpu)")
    return "cpu"
