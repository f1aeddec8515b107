"""How well a VAE generates (frac Table 9): FID and the offline proxy Fréchet distance of decoded prior samples.

``n`` latents z ∼ p(z) = N(0, I) (the global torch generator) are decoded to their mean images λ(z); both scores
compare them with reference images (the test set) by the Fréchet distance of Gaussians fitted to features
(:mod:`fyexp.metrics.fid`): FID in Inception features (missing without the weights), the proxy in the features
of a small classifier trained on the data set's labelled training images (cached in ``cache_dir``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch
from torch import Tensor

from fyexp.metrics import fid as fid_metrics


@dataclass(frozen=True)
class GenerationScores:
    fid: fid_metrics.FIDResult          # value, or status "missing" with its reason
    frechet_proxy: float
    proxy_accuracy: float               # the proxy classifier's test accuracy (how much its features mean)


@dataclass(frozen=True)
class FIDPass:
    """How FID is measured (frac §5.3: pytorch-fid, 10,000 generated images against the test set).

    ``dims``: pytorch-fid's feature block (2,048 = pool3, the FID; 64 in the ``quick`` profile, a cheap stand-in
    on the same code path); ``reference_images``: the first N test images (``None``: the whole test split, as the
    paper); ``cache_dir``: where each reference set's statistics are kept; ``resume``: the cell's file of the
    generated images' features done so far; ``subtask``: :meth:`fyexp.experiments.RunContext.subtask`, for the
    progress of each feature pass."""

    dims: int = 2048
    reference_images: int | None = None
    cache_dir: Path | None = None
    resume: Path | None = None
    subtask: Callable[..., Callable[..., None]] | None = None


@torch.no_grad()
def prior_images(model, n: int, device: str, chunk: int = 1000) -> Tensor:
    """(n, 784) decoded mean images ``model.decode_image(z)`` of z ∼ N(0, I_latent), on the CPU."""
    z = torch.randn(n, model.latent, device=device)
    return torch.cat([model.decode_image(b) for b in z.split(chunk)]).cpu()


def generation_scores(generated: Tensor, reference: Tensor, dataset: str, data_dir: Path | str | None,
                      fid_weights: str | None, proxy: fid_metrics.ProxySettings | dict, cache_dir: Path,
                      device: str = "cpu", fid: FIDPass = FIDPass()) -> GenerationScores:
    """FID of ``generated`` against ``dataset``'s test split (``fid``: how) and the proxy Fréchet distance against
    ``reference``; the proxy classifier is trained on ``dataset``'s training images and labels (scored on its test
    split; ``proxy``: its settings or their fields), or read from ``cache_dir``."""
    from fyexp.data.vision import image_labels, load_images

    proxy = proxy if isinstance(proxy, fid_metrics.ProxySettings) else fid_metrics.ProxySettings(**proxy)
    root = None if data_dir is None else str(data_dir)
    test_images = load_images(dataset, root, False)
    fid_reference = test_images if fid.reference_images is None else test_images[:fid.reference_images]
    progress = None
    if fid.subtask is not None:
        def progress(label: str, total: int):
            return fid.subtask(label, total, unit="images")
    result = fid_metrics.fid(generated, fid_reference, fid_weights, device, dims=fid.dims,
                             cache_dir=fid.cache_dir, progress=progress, resume=fid.resume)
    classifier, accuracy = fid_metrics.cached_proxy(
        cache_dir, load_images(dataset, root, True), image_labels(dataset, root, True),
        test_images, image_labels(dataset, root, False), proxy)
    return GenerationScores(result, fid_metrics.proxy_frechet(classifier, generated, reference), accuracy)
