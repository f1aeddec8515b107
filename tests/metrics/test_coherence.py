"""fyexp.topics: top words from decoder weights and embedding coherence with a tiny deterministic embedder."""

import numpy as np
import pytest

from fyexp.topics import HashEmbedder, mean_pairwise_cosine, top_words, topic_coherence


def test_top_words_by_decoder_column():
    vocab = ["a", "b", "c", "d"]
    weights = np.array([[0.1, 5.0], [0.9, -1.0], [0.5, 2.0], [-3.0, 0.0]])
    assert top_words(weights, vocab, 2) == [["b", "c"], ["a", "c"]]


def test_mean_pairwise_cosine_closed_forms():
    assert mean_pairwise_cosine(np.array([[1.0, 0.0], [2.0, 0.0], [3.0, 0.0]])) == pytest.approx(1.0)
    assert mean_pairwise_cosine(np.array([[1.0, 0.0], [0.0, 1.0]])) == pytest.approx(0.0)
    assert mean_pairwise_cosine(np.array([[1.0, 0.0], [-1.0, 0.0]])) == pytest.approx(-1.0)
    # three unit vectors 120° apart: every pair has cosine −1/2
    angles = np.deg2rad([0, 120, 240])
    assert mean_pairwise_cosine(np.c_[np.cos(angles), np.sin(angles)]) == pytest.approx(-0.5)


class _TableEmbedder:
    """Words of the same 'theme' (first letter) share a direction."""

    def __call__(self, words):
        return np.array([[1.0, 0.0] if w[0] == "x" else [0.0, 1.0] for w in words])


def test_coherent_topics_score_higher():
    coherent = [["xa", "xb", "xc"], ["ya", "yb", "yc"]]
    mixed = [["xa", "ya", "xb"], ["yb", "xc", "yc"]]
    emb = _TableEmbedder()
    assert topic_coherence(coherent, emb, [2, 3]) == {2: 1.0, 3: 1.0}
    assert topic_coherence(mixed, emb, [3])[3] == pytest.approx(1 / 3)


def test_hash_embedder_is_deterministic_and_coherence_in_range():
    emb = HashEmbedder(dim=32)
    assert np.array_equal(emb(["topic", "word"]), emb(["topic", "word"]))
    words = [[f"w{k}{i}" for i in range(25)] for k in range(4)]
    scores = topic_coherence(words, emb, [5, 10, 25])
    assert all(-1.0 <= v <= 1.0 for v in scores.values())
    # random directions in 32 dimensions: mean cosine near zero
    assert abs(scores[25]) < 0.1
