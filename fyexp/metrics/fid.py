"""FID (Heusel et al. 2017; pytorch-fid, as frac §5.3 uses) and an offline proxy in a Fashion-MNIST classifier's
features.

Fréchet distance between Gaussians fitted to two feature sets (means μ₁, μ₂, covariances Σ₁, Σ₂):

    d² = ‖μ₁ − μ₂‖² + tr(Σ₁ + Σ₂ − 2 (Σ₁ Σ₂)^{1/2}).

* **FID** = d² in the 2,048 pool features of pytorch-fid's Inception-v3 with the TF-FID weights
  (``pt_inception-2015-12-05-6726825d.pth``).  pytorch-fid downloads them through torch.hub; offline fyexp uses
  them only from an explicit file (spec ``fid_weights:`` or ``$FYEXP_FID_WEIGHTS``) or from torch's hub cache
  (``$TORCH_HOME/hub/checkpoints/``).  Without them FID is recorded as **missing** with a one-line reason —
  never replaced by another number under its name.  Gray images are repeated to 3 channels and resized to
  299 × 299 by pytorch-fid (``resize_input``), gray levels in [0, 1] mapped to [−1, 1] (``normalize_input``).
* **Proxy** (its own column, ``frechet_proxy``): d² in the 128 penultimate ReLU features of a small CNN
  trained on the Fashion-MNIST training set by fyexp — deterministic (seed 0, fixed order, CPU), cached by its
  settings, its test accuracy reported beside it.  It ranks generators like FID does in spirit (a closer
  feature distribution is better) but its scale is not FID's and it is not comparable to published FIDs.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tempfile
import warnings
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterator

import numpy as np
import torch
from scipy import linalg
from torch import Tensor, nn

from fyexp.io import atomic_write_bytes, atomic_write_text

FID_WEIGHTS_FILE = "pt_inception-2015-12-05-6726825d.pth"
ENV_WEIGHTS = "FYEXP_FID_WEIGHTS"


# --------------------------------------------------------------------------------- Fréchet distance
def feature_statistics(features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and covariance (ddof = 1, as pytorch-fid) of features (N, D)."""
    features = np.asarray(features, dtype=np.float64)
    return features.mean(0), np.cov(features, rowvar=False)


def frechet_distance(mu1: np.ndarray, sigma1: np.ndarray, mu2: np.ndarray, sigma2: np.ndarray,
                     eps: float = 1e-6) -> float:
    """‖μ₁ − μ₂‖² + tr(Σ₁ + Σ₂ − 2 (Σ₁Σ₂)^{1/2}); a singular product is regularised by εI (as pytorch-fid)."""
    mu1, mu2 = np.atleast_1d(mu1), np.atleast_1d(mu2)
    sigma1, sigma2 = np.atleast_2d(sigma1), np.atleast_2d(sigma2)
    diff = mu1 - mu2
    with warnings.catch_warnings():       # a singular product is handled below, as pytorch-fid does
        warnings.simplefilter("ignore", linalg.LinAlgWarning)
        covmean = linalg.sqrtm(sigma1 @ sigma2)
        if not np.isfinite(covmean).all():
            offset = np.eye(sigma1.shape[0]) * eps
            covmean = linalg.sqrtm((sigma1 + offset) @ (sigma2 + offset))
    covmean = covmean.real
    return float(diff @ diff + np.trace(sigma1) + np.trace(sigma2) - 2 * np.trace(covmean))


def frechet_between(features_a: np.ndarray, features_b: np.ndarray) -> float:
    return frechet_distance(*feature_statistics(features_a), *feature_statistics(features_b))


# ------------------------------------------------------------------------------------------- FID
def torch_hub_weights() -> Path:
    """Where pytorch-fid's torch.hub download would put the weights."""
    return Path(torch.hub.get_dir()) / "checkpoints" / FID_WEIGHTS_FILE


def resolve_fid_weights(path: str | None = None) -> tuple[Path | None, str]:
    """(weights file, '') or (None, one-line reason): the spec's path, else ``$FYEXP_FID_WEIGHTS``, else the hub."""
    explicit = path or os.environ.get(ENV_WEIGHTS)
    if explicit:
        file = Path(explicit).expanduser()
        return (file, "") if file.is_file() else (None, f"FID weights file {file} does not exist")
    hub = torch_hub_weights()
    if hub.is_file():
        return hub, ""
    return None, (f"no Inception weights offline: set fid_weights / ${ENV_WEIGHTS} to {FID_WEIGHTS_FILE} or "
                  f"place it at {hub}")


def inception_network(weights: Path | str) -> nn.Module:
    """pytorch-fid's InceptionV3 (pool3, 2,048 features) with the weights of the file ``weights``.  Never touches the
    network: pytorch-fid loads its weights through torch.hub, which reads its cache before downloading, so the file
    is offered there (:func:`_in_hub_cache`), after a ``weights_only`` load has checked that it holds tensors only
    (torch.hub's own load is not ``weights_only``; it reads the same bytes)."""
    from pytorch_fid import inception as fid_inception

    torch.load(weights, map_location="cpu", weights_only=True)
    with _in_hub_cache(Path(weights)):
        net = fid_inception.InceptionV3([fid_inception.InceptionV3.BLOCK_INDEX_BY_DIM[2048]])
    return net.eval()


@contextmanager
def _in_hub_cache(weights: Path) -> Iterator[None]:
    """torch.hub's folder (``torch.hub.set_dir``) pointed, for the block, at a temporary one whose
    ``checkpoints/`` holds ``weights`` under pytorch-fid's file name (a link, or a copy where links fail)."""
    previous = torch.hub.get_dir()
    with tempfile.TemporaryDirectory(prefix="fyexp-fid-hub-") as tmp:
        target = Path(tmp) / "checkpoints" / FID_WEIGHTS_FILE
        target.parent.mkdir()
        try:
            target.symlink_to(weights.resolve())
        except OSError:
            shutil.copyfile(weights, target)
        torch.hub.set_dir(tmp)
        try:
            yield
        finally:
            torch.hub.set_dir(previous)


@torch.no_grad()
def inception_features(net: nn.Module, images: Tensor, batch_size: int = 100, device: str = "cpu") -> np.ndarray:
    """Pool3 features (N, 2048) of gray images (N, 784) in [0, 1] (3 channels, resized by the network)."""
    net = net.to(device)
    out = []
    for batch in images.split(batch_size):
        x = batch.reshape(-1, 1, 28, 28).expand(-1, 3, -1, -1).to(device, torch.float32)
        out.append(net(x)[0].squeeze(-1).squeeze(-1).cpu().double())
    return torch.cat(out).numpy()


@dataclass
class FIDResult:
    value: float
    status: str        # ok | missing
    reason: str = ""


def fid(generated: Tensor, reference: Tensor, weights: str | None = None, device: str = "cpu",
        batch_size: int = 100) -> FIDResult:
    """FID of generated vs reference images (N, 784) in [0, 1], or a *missing* record without the weights."""
    try:
        import pytorch_fid  # noqa: F401
    except ImportError:
        return FIDResult(float("nan"), "missing", "pytorch-fid is not installed (pip install 'fyexp[fid]')")
    file, reason = resolve_fid_weights(weights)
    if file is None:
        return FIDResult(float("nan"), "missing", reason)
    net = inception_network(file)
    value = frechet_between(inception_features(net, generated, batch_size, device),
                            inception_features(net, reference, batch_size, device))
    return FIDResult(value, "ok")


# ------------------------------------------------------------------------------------------ proxy
class ProxyClassifier(nn.Module):
    """conv 1→32 (3×3) – ReLU – maxpool – conv 32→64 (3×3) – ReLU – maxpool – linear 1600→128 – ReLU – linear 10."""

    def __init__(self):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(1, 32, 3), nn.Conv2d(32, 64, 3)
        self.fc, self.out = nn.Linear(64 * 5 * 5, 128), nn.Linear(128, 10)

    def features(self, x: Tensor) -> Tensor:
        h = torch.max_pool2d(torch.relu(self.conv1(x.reshape(-1, 1, 28, 28))), 2)
        h = torch.max_pool2d(torch.relu(self.conv2(h)), 2)
        return torch.relu(self.fc(h.flatten(1)))

    def forward(self, x: Tensor) -> Tensor:
        return self.out(self.features(x))


@dataclass(frozen=True)
class ProxySettings:
    """How the proxy classifier is trained (its cache key)."""

    n_train: int = 60_000
    epochs: int = 2
    batch_size: int = 128
    lr: float = 1e-3
    seed: int = 0

    @property
    def key(self) -> str:
        return hashlib.sha1(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:10]


def train_proxy(images: Tensor, labels: Tensor, test_images: Tensor, test_labels: Tensor,
                settings: ProxySettings) -> tuple[ProxyClassifier, float]:
    """Train the classifier (CPU, single thread order, seeded); return it and its test accuracy.

    It is trained inside :func:`torch.random.fork_rng`, with its seed, so training it leaves the caller's global
    random stream where it was: a cell that trains the proxy draws the same samples afterwards as one that reads it
    from the cache (before 2026-11-25 the first cell of a fresh results folder drew other samples).
    """
    generator = torch.Generator().manual_seed(settings.seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(settings.seed)
        model = ProxyClassifier()
        optimizer = torch.optim.Adam(model.parameters(), lr=settings.lr)
        x, y = images[:settings.n_train], labels[:settings.n_train]
        for _ in range(settings.epochs):
            order = torch.randperm(len(x), generator=generator)
            for start in range(0, len(x), settings.batch_size):
                index = order[start:start + settings.batch_size]
                loss = nn.functional.cross_entropy(model(x[index]), y[index])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    model.eval()
    with torch.no_grad():
        predictions = torch.cat([model(b).argmax(-1) for b in test_images.split(1000)])
    return model, float((predictions == test_labels).float().mean())


def cached_proxy(cache_dir: Path, images: Tensor, labels: Tensor, test_images: Tensor, test_labels: Tensor,
                 settings: ProxySettings = ProxySettings()) -> tuple[ProxyClassifier, float]:
    """The proxy classifier from ``cache_dir/proxy-<key>.pt`` (trained and written atomically if absent)."""
    weights, meta = cache_dir / f"proxy-{settings.key}.pt", cache_dir / f"proxy-{settings.key}.json"
    model = ProxyClassifier()
    if weights.is_file() and meta.is_file():
        model.load_state_dict(torch.load(weights, map_location="cpu", weights_only=True))
        return model.eval(), float(json.loads(meta.read_text())["test_accuracy"])
    model, accuracy = train_proxy(images, labels, test_images, test_labels, settings)
    cache_dir.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    atomic_write_bytes(weights, buffer.getvalue())
    atomic_write_text(meta, json.dumps({**asdict(settings), "test_accuracy": accuracy}, indent=1))
    return model, accuracy


@torch.no_grad()
def proxy_frechet(model: ProxyClassifier, generated: Tensor, reference: Tensor) -> float:
    """d² between generated and reference images in the proxy's 128 penultimate features."""
    feats = [torch.cat([model.features(b.float()) for b in imgs.split(1000)]).double().numpy()
             for imgs in (generated, reference)]
    return frechet_between(*feats)
