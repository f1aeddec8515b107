"""fyexp.data.newsgroups: NVDM's tokenization and bag of words, and agreement with NVDM's own test.feat."""

import os
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from fyexp.data.newsgroups import bag_of_words, drop_empty, nvdm_vocabulary, read_feat, strip_header, tokenize

# the data root: $FYEXP_DATA_DIR, else a `shared/data` folder beside the checkout (the test skips without it)
DATA = Path(os.environ.get("FYEXP_DATA_DIR", Path(__file__).resolve().parents[3] / "shared" / "data"))
NEWSGROUPS = DATA / "20newsgroups"


def test_vocabulary_is_nvdms_2000_words():
    vocab = nvdm_vocabulary()
    assert len(vocab) == 2000 == len(set(vocab))
    assert all(w.isalpha() and w.islower() for w in vocab)


def test_tokenizer_and_header():
    post = "From: a@b.c\nSubject: Re: GPUs\n\nThe GPU's 3D-engine isn't\nfast,fast!\n\nbye"
    assert strip_header(post) == "The GPU's 3D-engine isn't\nfast,fast!\n\nbye"
    assert strip_header("no blank line, all header") == ""
    assert tokenize(strip_header(post)) == ["the", "gpu", "s", "d", "engine", "isn", "t", "fast", "fast", "bye"]


def test_bag_of_words_on_a_tiny_corpus():
    vocab = ["fast", "gpu", "slow"]
    posts = ["H: x\n\nGPU fast FAST gpu-fast", "H: y\n\nnothing here", "H: gpu\n\nslow"]
    counts = bag_of_words(posts, vocab)
    assert counts.shape == (3, 3)
    assert counts.toarray().tolist() == [[3, 2, 0], [0, 0, 0], [0, 0, 1]]  # header words are not counted
    assert drop_empty(counts).toarray().tolist() == [[3, 2, 0], [0, 0, 1]]
    assert bag_of_words(["gpu gpu"], vocab, header=False).toarray().tolist() == [[0, 2, 0]]


def test_read_feat(tmp_path):
    path = tmp_path / "x.feat"
    path.write_text("1 1:2 3:1\n7 2:5\n")
    assert read_feat(path, 3).toarray().tolist() == [[2, 0, 1], [0, 5, 0]]


@pytest.mark.slow
@pytest.mark.skipif(not (NEWSGROUPS / "nvdm" / "test.feat").is_file() or not (NEWSGROUPS / "20news-bydate.tar.gz").is_file(),
                    reason="20 Newsgroups archive or NVDM's test.feat not under $FYEXP_DATA_DIR/20newsgroups")
def test_rebuilt_test_split_contains_every_nvdm_test_document():
    """Every one of test.feat's 7,505 documents is rebuilt exactly (label and counts); the rebuild has 5 more.

    The by-date archive gives 7,510 non-empty test documents with this recipe; NVDM's file omits five of them
    (two posts of comp.windows.x, two of misc.forsale, one of sci.crypt — not empty, not duplicates of others),
    and lists the documents of each newsgroup in an order that is not the sorted file order.
    """
    import tarfile

    with tarfile.open(NEWSGROUPS / "20news-bydate.tar.gz") as tar:  # read in place: no extraction needed
        members = sorted((m for m in tar.getmembers() if m.isfile() and m.name.startswith("20news-bydate-test/")),
                         key=lambda m: m.name)
        texts = [tar.extractfile(m).read().decode("latin1") for m in members]
    groups = sorted({m.name.split("/")[1] for m in members})
    targets = [groups.index(m.name.split("/")[1]) for m in members]
    ours = bag_of_words(texts, nvdm_vocabulary())
    nonempty = np.asarray(ours.sum(1)).ravel() > 0
    labels = [line.split(None, 1)[0] for line in (NEWSGROUPS / "nvdm" / "test.feat").read_text().splitlines()]
    theirs = read_feat(NEWSGROUPS / "nvdm" / "test.feat", 2000)

    def key(matrix, i, label):
        row = matrix.getrow(i)
        return int(label), tuple(zip(row.indices.tolist(), row.data.astype(int).tolist()))

    rebuilt = Counter(key(ours, i, targets[i] + 1) for i in np.flatnonzero(nonempty))
    nvdm = Counter(key(theirs, i, labels[i]) for i in range(theirs.shape[0]))
    assert sum(nvdm.values()) == 7505 and sum(rebuilt.values()) == 7510
    assert not (nvdm - rebuilt)
    assert sum((rebuilt - nvdm).values()) == 5
