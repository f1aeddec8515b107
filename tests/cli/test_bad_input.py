"""Bad input, bad data and damaged results (issue 18), end to end through the installed `fyexp` script.

Each class is closed by one mechanism and tested here by a table of cases: the finished-cell rule
(:func:`fyexp.store.results.value_problem`), the domain table of settings, the data-error type.  Every case checks the
exit status, that stderr holds exactly the expected line(s) and no traceback, and that nothing was written where
nothing should be.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from fyexp.core.errors import DataError
from tests.conftest import TOY_SPECS, run_cli, strip_ansi


def _lines(stderr: str) -> list[str]:
    text = strip_ansi(stderr)
    assert "Traceback" not in text, text
    return [line for line in text.splitlines() if line.strip()]


def _one_line(stderr: str) -> str:
    lines = _lines(stderr)
    assert len(lines) == 1, stderr
    return lines[0]


# --- class 6: damaged results (the finished-cell rule) ---------------------------------------------------------

DAMAGED_VALUES = [
    # (id, value text written into the cell file, status, label, what report must say)
    ("a word", "banana", "ok", "", "value 'banana' of metric 'adjusted_mi' is not a number"),
    ("infinity", "inf", "ok", "", "value 'inf' of metric 'adjusted_mi' is not finite"),
    ("minus infinity", "-inf", "ok", "", "is not finite"),
    ("overflowing number", "1e999", "ok", "", "is not finite"),
    ("NaN without a reason", "nan", "ok", "", "NaN without a reason"),
    ("empty without a reason", "", "ok", "", "NaN without a reason"),
]


def _toy_specs(tmp_path: Path, old: str = "", new: str = "") -> Path:
    """A copy of the toy spec folder with ``old`` replaced by ``new`` in toy.yaml."""
    folder = tmp_path / "specs"
    folder.mkdir(parents=True, exist_ok=True)
    text = (TOY_SPECS / "toy.yaml").read_text()
    assert old in text
    (folder / "toy.yaml").write_text(text.replace(old, new))
    return folder


def _set_value(path: Path, value: str, status: str, label: str) -> None:
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    frame["value"], frame["status"], frame["label"] = value, status, label
    frame.to_csv(path, index=False)


@pytest.mark.slow
def test_only_finite_numbers_and_explained_nans_are_finished(tmp_path):
    explained = [("explained by its status", "", "missing", "no Inception weights offline"),
                 ("explained by its label", "nan", "ok", "undefined for one cluster")]
    values = ", ".join(str(float(i + 1)) for i in range(len(DAMAGED_VALUES) + len(explained)))
    env = {"FYEXP_EXPERIMENTS_DIR": str(_toy_specs(tmp_path, "values: [0.5]", f"values: [{values}]")),
           "FYEXP_RESULTS_DIR": str(tmp_path / "results")}
    first = run_cli("run", "toy", "--profile", "quick", "--no-progress", env=env)
    assert first.returncode == 0, first.stderr
    cells = sorted((tmp_path / "results" / "toy" / "cells" / "quick").glob("*.csv"))
    for path, (_, value, status, label, _) in zip(cells, DAMAGED_VALUES + [(None, *e[1:], None) for e in explained]):
        _set_value(path, value, status, label)
    report = run_cli("report", "toy", env=env)
    assert report.returncode == 0, report.stderr
    lines = _lines(report.stderr)
    assert "RuntimeWarning" not in report.stderr
    assert len(lines) == len(DAMAGED_VALUES), lines
    for path, line, (case_id, _, _, _, expected) in zip(cells, lines, DAMAGED_VALUES):
        assert f"skipped damaged cell file {path} (" in line and expected in line, (case_id, line)
    assert len(pd.read_csv(tmp_path / "results" / "toy" / "results.csv")) == len(explained)
    again = run_cli("run", "toy", "--profile", "quick", "--no-progress", env=env)
    assert again.returncode == 0, again.stderr
    assert f"{len(DAMAGED_VALUES)} cells run, {len(explained)} already finished" in " ".join(again.stderr.split())


@pytest.mark.slow
def test_a_corrupt_study_file_is_named_by_report(toy_env):
    results = Path(toy_env["FYEXP_RESULTS_DIR"])
    (results / "toy").mkdir(parents=True)
    (results / "toy" / "study.db").write_bytes(b"this is not SQLite" * 100)
    report = run_cli("report", "toy", env=toy_env)
    assert report.returncode == 0, report.stderr
    line = _one_line(report.stderr)
    assert f"skipped damaged study file {results / 'toy' / 'study.db'}" in line


# --- classes 4, 5, 7: values outside their domain, sizes that cannot fit, user errors (the domain table) --------

TUNE = ["tune", "toy", "--profile", "tune"]
RUN = ["run", "toy", "--profile", "quick"]
DOMAIN_CASES = [
    # (id, args, extra env, spec edit (old, new) or None, text the one line must contain); TMP is tmp_path
    ("n-trials negative", TUNE + ["--n-trials", "-1"], {}, None, "--n-trials: expected an integer >= 1, got -1"),
    ("n-trials zero", TUNE + ["--n-trials", "0"], {}, None, "--n-trials: expected an integer >= 1"),
    ("timeout nan", TUNE + ["--timeout", "nan"], {}, None, "--timeout: expected a positive number, got nan"),
    ("timeout negative", TUNE + ["--timeout", "-5"], {}, None, "--timeout: expected a positive number"),
    ("timeout infinite", TUNE + ["--timeout", "inf"], {}, None, "--timeout: expected a positive number"),
    ("threads-per-job zero", RUN + ["--executor", "local", "--threads-per-job", "0"], {}, None,
     "--threads-per-job: expected an integer >= 1, got 0"),
    ("jobs zero", TUNE + ["--executor", "local", "--jobs", "0"], {}, None, "--jobs: expected an integer >= 1"),
    ("slurm-mem-gb nan", RUN + ["--executor", "slurm", "--dry-run", "--slurm-mem-gb", "nan"], {}, None,
     "--slurm-mem-gb: expected a positive number, got nan"),
    ("slurm-time zero", RUN + ["--executor", "slurm", "--dry-run", "--slurm-time", "0"], {}, None,
     "--slurm-time: expected an integer >= 1"),
    ("full-width seed", RUN + ["--seeds", "５"], {}, None, "--seeds: expected non-negative integers"),
    ("full-width seed range", RUN + ["--seeds", "0-３"], {}, None, "--seeds: expected non-negative integers"),
    ("overflowing seed", RUN + ["--seeds", "99999999999999999999999"], {}, None,
     "--seeds: expected an integer in [0, 4294967295]"),
    ("grid too large", RUN + ["--seeds", "0-20000"], {}, None, "the grid has 20,001 cells, more than the limit"),
    ("storage dialect", TUNE + ["--storage", "bogus://x"], {}, None, "--storage: cannot open 'bogus://x'"),
    ("storage not a URL", TUNE + ["--storage", "notaurl"], {}, None, "--storage: 'notaurl' is not a database URL"),
    ("storage unreachable", TUNE + ["--storage", "sqlite:///TMP/missing/dir/x.db"], {}, None, "--storage: cannot open"),
    ("empty results dir", RUN, {"FYEXP_RESULTS_DIR": ""}, None, "FYEXP_RESULTS_DIR: expected a folder, got an empty"),
    ("blank data dir", RUN, {"FYEXP_DATA_DIR": "  "}, None, "FYEXP_DATA_DIR: expected a folder, got an empty"),
    ("empty grid axis", RUN, {}, ("values: [0.5]", "values: []"),
     "key 'profiles.quick.values': expected a non-empty list"),
    ("nan in a grid axis", RUN, {}, ("values: [0.5]", "values: [0.5, .nan]"),
     "key 'profiles.quick.values': expected a finite number"),
    ("infinite setting", RUN, {}, ("values: [0.5]", "values: [0.5]\n    sleep_s: .inf"),
     "key 'profiles.quick.sleep_s': expected a finite number"),
    ("flow-style override out of range", RUN, {},
     ("  quick:\n    seeds: [0]\n    values: [0.5]", "  quick: {seeds: [0], values: [0.5], sleep_s: -1}"),
     "key 'profiles.quick.sleep_s': expected a number >= 0"),
    ("seed in a spec too large", RUN, {}, ("seeds: [0]\n    values", "seeds: [4294967296]\n    values"),
     "key 'profiles.quick.seeds': expected a non-empty list of distinct non-negative integers"),
]


@pytest.mark.slow
@pytest.mark.parametrize("case_id, args, env, edit, expected", DOMAIN_CASES, ids=[c[0] for c in DOMAIN_CASES])
def test_a_value_outside_its_domain_is_one_line_exit_2_and_writes_nothing(toy_env, tmp_path, case_id, args, env,
                                                                          edit, expected):
    results = Path(toy_env["FYEXP_RESULTS_DIR"])
    env = {**toy_env, **env}
    if edit is not None:
        env["FYEXP_EXPERIMENTS_DIR"] = str(_toy_specs(tmp_path, *edit))
    result = run_cli(*[a.replace("TMP", str(tmp_path)) for a in args], env=env)
    assert result.returncode == 2, (result.returncode, result.stderr)
    line = _one_line(result.stderr)
    assert line.startswith("error: ") and expected in line, line
    assert not (results / "toy" / "cells").exists()
    assert not list(results.glob("toy/*.db"))


# --- classes 1, 2, 3: data errors (the DataError type) ---------------------------------------------------------

def _random_bytes(path: Path) -> None:
    path.write_bytes(bytes(range(256)) * 20)


def _truncated_gzip(path: Path) -> None:
    """A real .tar.gz cut short (a download that stopped): tarfile raises EOFError, which click reads as Ctrl-C."""
    import io
    import os
    import tarfile

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        payload = os.urandom(200_000)
        info = tarfile.TarInfo("20news-bydate-train/alt.atheism/1")
        info.size = len(payload)
        tar.addfile(info, io.BytesIO(payload))
    path.write_bytes(buffer.getvalue()[:100_000])


def _no_archive(path: Path) -> None:
    pass


ARCHIVE_CASES = [
    # (id, command, how the archive is damaged, text the last line must contain)
    ("run, garbage archive", "run", _random_bytes, "not a readable .tar.gz archive"),
    ("run, truncated archive", "run", _truncated_gzip, "not a readable .tar.gz archive (EOFError"),
    ("run, no archive", "run", _no_archive, "20news-bydate.tar.gz: absent"),
    ("tune, garbage archive", "tune", _random_bytes, "not a readable .tar.gz archive"),
    ("tune, no archive", "tune", _no_archive, "20news-bydate.tar.gz: absent"),
]


@pytest.mark.slow
@pytest.mark.parametrize("case_id, command, damage, expected", ARCHIVE_CASES, ids=[c[0] for c in ARCHIVE_CASES])
def test_a_bad_data_file_is_a_data_error_not_an_interruption_nor_a_success(tmp_path, case_id, command, damage,
                                                                           expected):
    """Exit 2 naming the file and where to get a good one; tune stops at the first trial; the download cache
    (a garbage file under the cache's download key here) never stands in for the data root the user named."""
    from fyexp.data.newsgroups import _source_key, nvdm_vocabulary

    data, cache, results = tmp_path / "data", tmp_path / "cache", tmp_path / "results"
    (data / "20newsgroups").mkdir(parents=True)
    archive = data / "20newsgroups" / "20news-bydate.tar.gz"
    damage(archive)
    (cache / "20newsgroups").mkdir(parents=True)
    (cache / "20newsgroups" / f"bow-{_source_key(None, nvdm_vocabulary(), None)}.npz").write_bytes(b"not npz")
    extra = ["--n-trials", "2"] if command == "tune" else ["--no-progress"]
    result = run_cli(command, "nvdm", "--profile", "quick", "--data-dir", str(data), *extra,
                     env={"FYEXP_RESULTS_DIR": str(results), "FYEXP_CACHE_DIR": str(cache)})
    assert result.returncode == 2, (result.returncode, result.stderr)
    last = _lines(result.stderr)[-1]
    assert last.startswith(f"error: {archive}: ") and expected in last and "qwone.com" in last, last
    assert "interrupted" not in result.stderr
    assert not (results / "nvdm" / "cells").exists() and not list((results / "nvdm").glob("best_params*.yaml"))
    if command == "tune":
        assert result.stderr.count("Trial 1 ") == 0  # the study stopped at the first failing trial


# --- class 9: a missing optional data set (CellSkipped) ---------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("strict, status", [(False, 0), (True, 1)], ids=["skips alone exit 0", "--strict fails"])
def test_a_cell_whose_data_is_absent_is_skipped_once_and_fails_only_under_strict(tmp_path, strict, status):
    empty, results = tmp_path / "data", tmp_path / "results"
    empty.mkdir()
    result = run_cli("run", "vr-bnn", "--profile", "cpu", "--data-dir", str(empty), "--only", "dataset=year",
                     "--no-progress", "--yes", *(["--strict"] if strict else []),
                     env={"FYEXP_RESULTS_DIR": str(results)})
    assert result.returncode == status, result.stderr
    text = " ".join(_lines(result.stderr))
    assert text.count("skipped: data missing") == 1 and "year" in text and "github.com" in text, text
    assert "failed:" not in text and "0 failed, 1 skipped (data missing)" in text
    assert not (results / "vr-bnn" / "cells").exists()  # nothing written: a later run with the data runs it


# --- tune: a study never reports success when its trials failed -----------------------------------------------

@pytest.mark.parametrize("error, raised, trials", [
    (ValueError("the model diverged"), "RunFailed", 3),                        # model errors: every trial runs
    (DataError("/d/x.tar.gz", "damaged", "get a new one"), "DataError", 1),
    (OSError(28, "No space left on device"), "OSError", 1),
], ids=["every trial failed", "data error stops the study", "file error stops the study"])
def test_failed_trials_stop_the_study_or_fail_the_call(error, raised, trials):
    import optuna

    from fyexp.spec.tuning import open_study, run_study

    study = open_study("s", optuna.storages.InMemoryStorage())

    def objective(trial):
        trial.suggest_float("x", 0, 1)
        raise error

    with pytest.raises(Exception) as caught:
        run_study(study, objective, n_trials=3)
    assert type(caught.value).__name__ == raised
    assert len(study.trials) == trials and all(t.state.name == "FAIL" for t in study.trials)


# every token through the finished-cell rule for values (written against the pandas rule, kept after it was
# replaced by a pure-Python one: both must agree on each)
VALUE_TOKENS = [
    ("1.5", "ok", "", None), (" 2 ", "ok", "", None), ("-0", "ok", "", None), ("1e-320", "ok", "", None),
    ("3", "failed", "", None), ("banana", "ok", "", "not a number"), ("True", "ok", "", "not a number"),
    ("0x10", "ok", "", "not a number"), ("1_000", "ok", "", "not a number"), ("nAn", "ok", "", "not a number"),
    ("inf", "ok", "", "not finite"), ("-Infinity", "failed", "why", "not finite"), ("1e999", "ok", "", "not finite"),
    ("nan", "ok", "", "NaN without a reason"), ("", "ok", "", "NaN without a reason"),
    ("NaN", "ok", "  ", "NaN without a reason"), ("nan", "failed", "", None), ("", "ok", "diverged", None),
    ("NAN", "missing", "", None),
]


@pytest.mark.parametrize("token,status,label,what", VALUE_TOKENS)
def test_value_rule_token_by_token(tmp_path, token, status, label, what):
    """fyexp.store.results.value_problem on one cell file whose second row carries ``token`` (the first is fine), read
    as ``fyexp report`` reads it: the verdict names the token and its category, or accepts it."""
    from fyexp.store.results import read_cell_file

    header = "experiment,profile,method,params,seed,metric,value,status,label,cell\n"
    path = tmp_path / "c.csv"
    path.write_text(header + 'toy,quick,m,{},0,first,0.25,ok,,c\n'
                    + f'toy,quick,m,{{}},0,second,"{token}",{status},"{label}",c\n')
    frame, problem = read_cell_file(path, expected_key="c")
    if what is None:
        assert problem is None, problem
    else:
        assert problem == f"value {token.strip()!r} of metric 'second' is {what}"
