"""20 Newsgroups as NVDM's bags of words (Miao et al., 2016; FYVI Appendix D).

Documents come from the "by date" split (11,314 train / 7,532 test) read with scikit-learn's
:func:`sklearn.datasets.load_files` from ``<data root>/20newsgroups/`` (the archive ``20news-bydate.tar.gz``
or its extracted ``20news-bydate-{train,test}`` folders), or downloaded with
:func:`sklearn.datasets.fetch_20newsgroups` when no data root is given.  Each document becomes a row of word
counts over NVDM's 2,000-word vocabulary (``nvdm_vocab.txt``, id = line number) by :func:`bag_of_words`:

1. drop the header, i.e. everything up to the first blank line;
2. lower-case; tokens are the maximal runs of ``[a-z]``;
3. keep the tokens that are vocabulary words and count them;

and documents with no vocabulary word are dropped.  When NVDM's own ``nvdm/test.feat`` is present it *is*
the test split the FY-NVDM authors used (7,505 documents in its order); the first 1,000 are the validation set
and the remaining 6,505 the test set.  Without it the rebuilt test split is used in ``load_files`` order (the
same documents up to five, in another order — see ``tests/data/test_newsgroups.py``).

Processed matrices are cached as ``.npz`` (``$FYEXP_CACHE_DIR`` or ``~/.cache/fyexp``), keyed by the vocabulary
and the source files, so only the first call tokenizes.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tarfile
import zlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import scipy.sparse as sp

from fyexp.data.sources import CONNECT_TIMEOUT_S, host, reachable, short, socket_timeout, supply
from fyexp.core.errors import DataError, DataMissing

ARCHIVE = "20news-bydate.tar.gz"
SPLIT_FOLDERS = {"train": "20news-bydate-train", "test": "20news-bydate-test"}
N_VALIDATION = 1000
_TOKEN = re.compile(r"[a-z]+")


def nvdm_vocabulary() -> list[str]:
    """NVDM's 2,000-word vocabulary (``vocab.new``), in id order."""
    text = resources.files("fyexp.data").joinpath("nvdm_vocab.txt").read_text()
    return [line.split()[0] for line in text.splitlines() if line.strip()]


def strip_header(text: str) -> str:
    """The body of a Usenet post: everything after the first blank line ('' when there is none)."""
    _, sep, body = text.partition("\n\n")
    return body if sep else ""


def tokenize(text: str) -> list[str]:
    """Lower-case ``text`` and return its maximal runs of ``[a-z]``."""
    return _TOKEN.findall(text.lower())


def bag_of_words(texts: Iterable[str], vocabulary: Sequence[str], *, header: bool = True) -> sp.csr_matrix:
    """Word counts of each text over ``vocabulary``.

    Parameters
    ----------
    texts : iterable of str, length n
        Raw posts (with their header when ``header`` is true, which is then dropped).
    vocabulary : sequence of str, length V
        Column ``j`` counts ``vocabulary[j]``; other tokens are ignored.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n, V), dtype float32 — empty rows included (see :func:`drop_empty`).
    """
    index = {word: j for j, word in enumerate(vocabulary)}
    indptr, indices, counts = [0], [], []
    for text in texts:
        ids = [index[t] for t in tokenize(strip_header(text) if header else text) if t in index]
        uniq, cnt = np.unique(np.asarray(ids, dtype=np.int64), return_counts=True)
        indices.append(uniq)
        counts.append(cnt)
        indptr.append(indptr[-1] + len(uniq))
    n = len(indptr) - 1
    data = np.concatenate(counts).astype(np.float32) if n else np.zeros(0, np.float32)
    cols = np.concatenate(indices) if n else np.zeros(0, np.int64)
    return sp.csr_matrix((data, cols, np.asarray(indptr)), shape=(n, len(vocabulary)))


def drop_empty(counts: sp.csr_matrix) -> sp.csr_matrix:
    """The rows of ``counts`` with at least one word."""
    return counts[np.asarray(counts.sum(axis=1)).ravel() > 0]


def read_feat(path: Path, vocab_size: int) -> sp.csr_matrix:
    """Read an NVDM ``.feat`` file (one document a line: ``label id:count ...``, ids 1-based) as (n, V) counts."""
    rows, cols, vals = [], [], []
    with open(path) as handle:
        for i, line in enumerate(handle):
            for item in line.split()[1:]:
                word, count = item.split(":")
                rows.append(i)
                cols.append(int(word) - 1)
                vals.append(float(count))
            n = i + 1
    return sp.csr_matrix((np.asarray(vals, np.float32), (rows, cols)), shape=(n, vocab_size))


@dataclass(frozen=True)
class NewsgroupsBOW:
    """Bags of words of the three splits, each a (n, V) float32 CSR matrix of counts."""

    train: sp.csr_matrix
    valid: sp.csr_matrix
    test: sp.csr_matrix
    vocabulary: tuple[str, ...]
    test_source: str

    def sizes(self) -> dict[str, int]:
        return {"train": self.train.shape[0], "valid": self.valid.shape[0], "test": self.test.shape[0]}


# ----------------------------------------------------------------------------------------------------------
# reading the raw posts

def _raw_split(split: str, newsgroups_dir: Path | None, cache_dir: Path) -> list[str]:
    """The posts of one by-date split in ``load_files`` order (folders, then file names, sorted)."""
    from sklearn.datasets import load_files

    if newsgroups_dir is None:
        return _downloaded_split(split, cache_dir)
    folder = newsgroups_dir / SPLIT_FOLDERS[split]
    if not folder.is_dir():
        folder = _extracted(newsgroups_dir / ARCHIVE, cache_dir) / SPLIT_FOLDERS[split]
    return list(load_files(str(folder), encoding="latin1", shuffle=False).data)


def _downloaded_split(split: str, cache_dir: Path) -> list[str]:
    """One split from :func:`sklearn.datasets.fetch_20newsgroups` (its cache under ``cache_dir``, downloaded
    once): offline, a :class:`DataMissing` within seconds (:func:`~fyexp.data.sources.reachable`)."""
    from sklearn.datasets import fetch_20newsgroups
    from sklearn.datasets._twenty_newsgroups import ARCHIVE as REMOTE

    home = cache_dir / "sklearn"
    where = home / "20news_home"
    if not (home / "20news-bydate_py3.pkz").is_file() and not reachable(REMOTE.url):
        raise DataMissing(where, f"absent, and 20 Newsgroups cannot be downloaded (no connection to "
                          f"{host(REMOTE.url)} within {CONNECT_TIMEOUT_S:g} s)", GET_ARCHIVE)
    try:
        with socket_timeout():
            bunch = fetch_20newsgroups(data_home=str(home), subset=split, shuffle=False, remove=(), n_retries=1)
    except OSError as exc:
        raise DataMissing(where, f"absent, and the download of 20 Newsgroups failed ({short(exc)})",
                          GET_ARCHIVE) from None
    return list(bunch.data)


GET_ARCHIVE = supply(f"{ARCHIVE} (http://qwone.com/~jason/20Newsgroups/)", "20newsgroups")


def _extracted(archive: Path, cache_dir: Path) -> Path:
    """Extract the by-date archive once into the cache, in a folder keyed by the archive (its path and size), and
    return the folder holding the two split folders.  A damaged archive is a :class:`DataError`."""
    if not archive.is_file():
        raise DataMissing(archive, f"absent (nor are the folders {list(SPLIT_FOLDERS.values())} beside it)",
                          GET_ARCHIVE)
    target = cache_dir / f"20news-bydate-{_file_key([archive])}"
    done = target / ".complete"
    if not done.is_file():
        target.mkdir(parents=True, exist_ok=True)
        try:
            with tarfile.open(archive) as tar:
                tar.extractall(target, filter="data")
        except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
            shutil.rmtree(target, ignore_errors=True)
            raise DataError(archive, f"not a readable .tar.gz archive ({type(exc).__name__}: {str(exc).split(':')[0]})",
                            GET_ARCHIVE) from None
        done.touch()
    return target


def _file_key(paths: Sequence[Path]) -> str:
    """A hash of files' full resolved paths, sizes and modification times (absent files count as absent)."""
    h = hashlib.sha256()
    for path in paths:
        st = path.stat() if path.exists() else None
        h.update(f"{path.resolve()}:{st.st_size if st else '-'}:{int(st.st_mtime) if st else '-'}\n".encode())
    return h.hexdigest()[:16]


def _source_key(newsgroups_dir: Path | None, vocabulary: Sequence[str], test_feat: Path | None) -> str:
    """A hash naming the cached matrices: vocabulary, this recipe, and the source: the data root's files (full
    path, size, mtime: :func:`_file_key`) or, without a data root, the download.  A cache made from one source is
    therefore never read for another (an explicit ``--data-dir`` is never shadowed)."""
    h = hashlib.sha256("\n".join(vocabulary).encode())
    h.update(b"recipe:v1")
    sources = ([newsgroups_dir / ARCHIVE, newsgroups_dir / SPLIT_FOLDERS["train"], newsgroups_dir / SPLIT_FOLDERS["test"]]
               if newsgroups_dir else []) + ([test_feat] if test_feat else [])
    h.update(_file_key(sources).encode() if sources else b"source:download")
    return h.hexdigest()[:16]


def default_cache_dir() -> Path:
    """``$FYEXP_CACHE_DIR`` or ``~/.cache/fyexp``."""
    return Path(os.environ.get("FYEXP_CACHE_DIR") or Path.home() / ".cache" / "fyexp")


def load_newsgroups(data_dir: Path | None, cache_dir: Path | None = None,
                    n_validation: int = N_VALIDATION) -> NewsgroupsBOW:
    """NVDM bags of words of 20 Newsgroups: train (rebuilt), validation and test (first ``n_validation`` / rest).

    Parameters
    ----------
    data_dir : Path or None
        The data root; the posts are read from ``data_dir/20newsgroups/``.  ``None`` downloads them.
    cache_dir : Path, optional
        Where the processed matrices (and the extracted archive) are kept; default :func:`default_cache_dir`.
    """
    cache = Path(cache_dir) if cache_dir else default_cache_dir()
    cache = cache / "20newsgroups"
    vocabulary = nvdm_vocabulary()
    newsgroups_dir = Path(data_dir) / "20newsgroups" if data_dir else None
    test_feat = newsgroups_dir / "nvdm" / "test.feat" if newsgroups_dir else None
    if test_feat is not None and not test_feat.is_file():
        test_feat = None
    if newsgroups_dir is not None and not any(p.exists() for p in (newsgroups_dir / ARCHIVE,
                                                                   newsgroups_dir / SPLIT_FOLDERS["train"])):
        raise DataMissing(newsgroups_dir / ARCHIVE, "absent (nor is the folder "
                        f"{SPLIT_FOLDERS['train']} beside it)", GET_ARCHIVE)
    cached = cache / f"bow-{_source_key(newsgroups_dir, vocabulary, test_feat)}.npz"
    if cached.is_file():
        with np.load(cached, allow_pickle=False) as z:
            train = sp.csr_matrix((z["train_data"], z["train_indices"], z["train_indptr"]), shape=tuple(z["train_shape"]))
            test = sp.csr_matrix((z["test_data"], z["test_indices"], z["test_indptr"]), shape=tuple(z["test_shape"]))
            source = str(z["test_source"])
    else:
        cache.mkdir(parents=True, exist_ok=True)
        train = drop_empty(bag_of_words(_raw_split("train", newsgroups_dir, cache), vocabulary))
        if test_feat is not None:
            test, source = read_feat(test_feat, len(vocabulary)), "nvdm/test.feat"
        else:
            test = drop_empty(bag_of_words(_raw_split("test", newsgroups_dir, cache), vocabulary))
            source = "rebuilt from the by-date archive"
        tmp = cached.with_suffix(f".{os.getpid()}.tmp.npz")
        np.savez_compressed(tmp, test_source=np.asarray(source),
                            **{f"{name}_{part}": getattr(m, part) for name, m in (("train", train), ("test", test))
                               for part in ("data", "indices", "indptr")},
                            train_shape=np.asarray(train.shape), test_shape=np.asarray(test.shape))
        os.replace(tmp, cached)
    return NewsgroupsBOW(train=train, valid=test[:n_validation], test=test[n_validation:],
                         vocabulary=tuple(vocabulary), test_source=source)


def load_count_tensors(data_dir: Path | None, cache_dir: Path | str | None = None):
    """NVDM's input: the splits of :func:`load_newsgroups` as dense float32 torch tensors of word counts
    (documents × words) — ``(train, valid, test, vocabulary)``."""
    import torch

    bow = load_newsgroups(data_dir, cache_dir)
    return (*(torch.from_numpy(m.toarray()) for m in (bow.train, bow.valid, bow.test)), bow.vocabulary)
