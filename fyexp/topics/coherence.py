"""Embedding topic coherence (FYVI Appendix D, Figure 3).

A latent dimension k of a document VAE is read as a topic through its decoder column R[:, k] ∈ ℝ^V: its
top-n words are the n largest entries.  Its coherence is the mean pairwise cosine similarity of their word
embeddings,

    C_k(n) = (2 / (n(n−1))) Σ_{i<j} cos(e(w_i), e(w_j)),

and a model's coherence at n is the mean of C_k(n) over its K topics.  The paper embeds the words with a
sentence-transformer (``all-mpnet-base-v2``); any :class:`Embedder` (a callable from a list of words to an
(n, d) array) can be plugged in, e.g. :class:`HashEmbedder`, a deterministic stand-in for tests.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

Embedder = Callable[[Sequence[str]], np.ndarray]
DEFAULT_MODEL = "all-mpnet-base-v2"


def top_words(weights: np.ndarray, vocabulary: Sequence[str], n: int) -> list[list[str]]:
    """The ``n`` highest-weighted words of each topic.

    Parameters
    ----------
    weights : array of shape (V, K)
        Decoder weights, column k scoring every word for topic k.
    vocabulary : sequence of str, length V

    Returns
    -------
    K lists of n words, most weighted first.
    """
    order = np.argsort(-np.asarray(weights), axis=0, kind="stable")[:n]
    return [[vocabulary[i] for i in order[:, k]] for k in range(order.shape[1])]


def mean_pairwise_cosine(vectors: np.ndarray) -> float:
    """Mean of cos(v_i, v_j) over the pairs i < j of the rows of ``vectors`` (n ≥ 2, shape (n, d))."""
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True).clip(min=1e-12)
    sims = unit @ unit.T
    n = len(unit)
    return float((sims.sum() - np.trace(sims)) / (n * (n - 1)))


def topic_coherence(topics: Sequence[Sequence[str]], embedder: Embedder, sizes: Sequence[int]) -> dict[int, float]:
    """Mean over topics of the embedding coherence of their first n words, for each n in ``sizes``.

    ``topics`` must list at least ``max(sizes)`` words each; every distinct word is embedded once.
    """
    words = sorted({w for topic in topics for w in topic[:max(sizes)]})
    table = dict(zip(words, np.asarray(embedder(words), dtype=np.float64)))
    return {n: float(np.mean([mean_pairwise_cosine(np.stack([table[w] for w in t[:n]])) for t in topics]))
            for n in sizes}


class HashEmbedder:
    """A deterministic embedder for tests: each word a fixed pseudo-random Gaussian vector (seeded by its hash)."""

    def __init__(self, dim: int = 16):
        self.dim = dim

    def __call__(self, words: Sequence[str]) -> np.ndarray:
        out = np.empty((len(words), self.dim))
        for i, word in enumerate(words):
            seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
            out[i] = np.random.default_rng(seed).standard_normal(self.dim)
        return out


class SentenceTransformerEmbedder:
    """Words embedded by a sentence-transformers model loaded from a local folder or a hub name."""

    def __init__(self, model: str, device: str = "cpu", batch_size: int = 256, local_files_only: bool = False):
        from sentence_transformers import SentenceTransformer

        self.model = SentenceTransformer(model, device=device, local_files_only=local_files_only)
        self.batch_size = batch_size

    def __call__(self, words: Sequence[str]) -> np.ndarray:
        return self.model.encode(list(words), batch_size=self.batch_size, convert_to_numpy=True,
                                 show_progress_bar=False)


def resolve_embedder_path(spec_value: str = "") -> str:
    """Where the sentence-transformer comes from: the spec's value, else ``$FYEXP_EMBEDDER``, else the hub name."""
    return spec_value or os.environ.get("FYEXP_EMBEDDER", "") or DEFAULT_MODEL


def load_embedder(spec_value: str = "", device: str = "cpu") -> tuple[Embedder | None, str]:
    """A :class:`SentenceTransformerEmbedder` and ``""``, or ``None`` and why it cannot be loaded (one phrase:
    sentence-transformers not installed, a path that does not exist, the hub unreachable), so that the run can say
    that the coherence is absent and why instead of leaving it out in silence."""
    source = resolve_embedder_path(spec_value)
    if not (Path(source).exists() or source == DEFAULT_MODEL):
        return None, f"embedder {source}: no such folder (the spec's embedder: or $FYEXP_EMBEDDER)"
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        return None, "sentence-transformers is not installed (pip install --no-deps -r requirements.lock)"
    try:                      # a folder, or a hub name already in the local Hugging Face cache: no network
        return SentenceTransformerEmbedder(source, device=device, local_files_only=True), ""
    except Exception as exc:  # a damaged model folder; a hub name not in the cache
        if Path(source).exists():
            return None, f"embedder {source} did not load ({_first_line(exc)})"
    if not _reachable(HUB_HOST):  # the hub client would retry for about 80 s before giving up
        return None, (f"embedder {source}: not in the local Hugging Face cache and {HUB_HOST} cannot be reached "
                      f"(set the spec's embedder: or $FYEXP_EMBEDDER to a local copy of the model)")
    try:
        return SentenceTransformerEmbedder(source, device=device), ""
    except Exception as exc:  # the hub answered but the download failed
        return None, f"embedder {source} did not load ({_first_line(exc)})"


HUB_HOST = "huggingface.co"


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:160]


def _reachable(host: str, port: int = 443, timeout_s: float = 3.0) -> bool:
    """Whether ``host`` resolves and accepts a TCP connection within ``timeout_s`` (one try)."""
    import socket

    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return True
    except OSError:
        return False
