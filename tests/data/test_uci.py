"""UCI loader: the benchmark layout, standardization with training statistics, one-line errors naming the file."""

import numpy as np
import pytest

from fyexp.data.uci import load_split, load_uci, split_indices, standardize
from fyexp.core.errors import FyexpError


def make_uci(root, name="bostonHousing", n=10, n_splits=2, index_files=True):
    folder = root / "UCI" / name
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    data = np.column_stack([rng.normal(size=n), np.full(n, 3.0), rng.normal(size=n) * 5 + 2])
    np.savetxt(folder / "data.txt", data)
    if index_files:
        np.savetxt(folder / "index_features.txt", [0, 1], fmt="%d")
        np.savetxt(folder / "index_target.txt", [2], fmt="%d")
        np.savetxt(folder / "n_splits.txt", [n_splits], fmt="%d")
        for s in range(n_splits):
            perm = np.random.default_rng(s).permutation(n)
            np.savetxt(folder / f"index_train_{s}.txt", perm[:8], fmt="%d")
            np.savetxt(folder / f"index_test_{s}.txt", perm[8:], fmt="%d")
    return data


def test_standardize_uses_training_statistics_and_constant_column_gets_std_one():
    x_train = np.array([[1.0, 5.0], [3.0, 5.0]])
    x_test = np.array([[2.0, 7.0]])
    s = standardize(x_train, np.array([0.0, 4.0]), x_test, np.array([10.0]))
    np.testing.assert_allclose(s.x_train, [[-1.0, 0.0], [1.0, 0.0]])
    np.testing.assert_allclose(s.x_test, [[0.0, 2.0]])  # constant column: (7 - 5) / 1
    np.testing.assert_allclose(s.y_train, [-1.0, 1.0])
    assert (s.y_mean, s.y_std) == (2.0, 2.0)
    np.testing.assert_allclose(s.y_test, [10.0])  # test targets stay in original units


def test_load_split_reads_the_layout(tmp_path):
    data = make_uci(tmp_path)
    uci = load_uci(str(tmp_path), "boston")
    assert uci.n_splits == 2 and uci.x.shape == (10, 2)
    train, test = split_indices(uci, 1)
    split = load_split(uci, 1)
    np.testing.assert_allclose(split.y_test, data[test, 2])
    np.testing.assert_allclose(split.y_train * split.y_std + split.y_mean, data[train, 2])
    assert np.all(split.x_train[:, 1] == 0)


def test_missing_index_files_name_the_file(tmp_path):
    make_uci(tmp_path, index_files=False)
    with pytest.raises(FyexpError, match=r"index_features\.txt: absent"):
        load_uci(str(tmp_path), "boston")


def test_split_out_of_range_names_n_splits(tmp_path):
    make_uci(tmp_path, n_splits=2)
    uci = load_uci(str(tmp_path), "boston")
    with pytest.raises(FyexpError, match=r"n_splits\.txt: split 5 out of range"):
        split_indices(uci, 5)


def test_missing_folder_is_one_line(tmp_path):
    with pytest.raises(FyexpError, match=r"UCI/yacht: absent \(the folder of UCI data set 'yacht'\)") as err:
        load_uci(str(tmp_path), "yacht")
    assert "\n" not in str(err.value)
