"""End to end, as a user runs it: the installed `fyexp` console script, its progress bar on, in a terminal.

Every bad input that once gave a traceback or was silently accepted is a row of one table: exit status, one
line on stderr naming the key or file, no traceback.  Damaged cell files are redone; `report` survives them;
files follow the umask; `fyexp list` never cuts a name.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import ROOT, TOY_SPECS, cli_env, fyexp_script, run_cli, run_in_terminal, strip_ansi

EXPERIMENTS = ROOT / "experiments"


def _one_clean_line(stderr: str) -> str:
    lines = [line for line in strip_ansi(stderr).splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


def _toy_spec(tmp_path: Path, old: str, new: str) -> Path:
    folder = tmp_path / "specs"
    folder.mkdir(parents=True, exist_ok=True)
    text = (TOY_SPECS / "toy.yaml").read_text()
    assert old in text
    (folder / "toy.yaml").write_bytes(text.replace(old, new).encode("utf-8", errors="surrogateescape"))
    return folder


# --- the main command, in a terminal ---------------------------------------------------------------------------

@pytest.mark.slow
def test_run_shows_a_live_bar_runs_every_cell_and_report_reads_them(tmp_path):
    results = tmp_path / "fresh-results"
    code, screen = run_in_terminal("run", "gmm-clustering", "--profile", "quick", "--results-dir", str(results),
                                   "--experiments-dir", str(EXPERIMENTS), columns=80)
    assert code == 0, screen
    assert "━" in screen  # rich's bar, drawn live
    plain = strip_ansi(screen)
    assert "Traceback" not in plain
    assert "gmm-clustering [quick]: 12 cells run, 0 already finished, 0 failed" in plain
    assert len(list((results / "gmm-clustering" / "cells" / "quick").glob("*.csv"))) == 12
    code, screen = run_in_terminal("report", "gmm-clustering", "--results-dir", str(results),
                                   "--experiments-dir", str(EXPERIMENTS))
    assert code == 0 and "Traceback" not in screen, screen
    assert (results / "gmm-clustering" / "tables" / "fyvi-table1-quick.md").is_file()
    # the report kept the claims' verdicts; `fyexp claims` on an empty user cache prints them as it would judge them
    assert (results / "claims" / "verdicts.json").is_file() and "claims' verdicts" in strip_ansi(screen)
    answers = []
    for cache in ("kept", "judged"):
        (tmp_path / cache).mkdir()
        answers.append(run_cli("claims", "--json", "--results-dir", str(results), "--experiments-dir",
                               str(EXPERIMENTS), env={"FYEXP_CACHE_DIR": str(tmp_path / cache),
                                                      "PYTHONPROFILEIMPORTTIME": "1"}))
        (results / "claims" / "verdicts.json").unlink(missing_ok=True)
    assert [a.returncode for a in answers] == [0, 0] and answers[0].stdout == answers[1].stdout
    assert " pandas\n" not in answers[0].stderr and " pandas\n" in answers[1].stderr   # read back, then judged
    assert '"verdict": "supported"' in answers[0].stdout


@pytest.mark.slow
def test_no_progress_prints_a_line_per_cell(toy_env):
    result = run_cli("run", "toy", "--profile", "quick", "--no-progress", env=toy_env)
    assert result.returncode == 0, result.stderr
    assert "[1/1] toy__x=0.5__seed=0 ..." in result.stderr and "[1/1] toy__x=0.5__seed=0 ok in" in result.stderr


@pytest.mark.slow
def test_ctrl_c_prints_its_message_and_keeps_finished_cells(tmp_path):
    specs = _toy_spec(tmp_path, "values: [0.5]", "values: [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]\n    sleep_s: 0.5")
    results = tmp_path / "results"
    env = cli_env({"FYEXP_EXPERIMENTS_DIR": str(specs), "FYEXP_RESULTS_DIR": str(results)})
    # Ctrl-C as in a terminal: SIGINT at its default disposition.  A test run launched in the background
    # (`.ci/run &`) inherits SIGINT ignored, and so would fyexp — which then rightly runs to the end.
    proc = subprocess.Popen([fyexp_script(), "run", "toy", "--profile", "quick"], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    cells = results / "toy" / "cells" / "quick"
    deadline = time.time() + 60
    while time.time() < deadline and len(list(cells.glob("*.csv"))) < 2:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "interrupted: finished cells are saved; rerun the same command to resume" in stderr
    assert "Traceback" not in stderr
    assert len(list(cells.glob("*.csv"))) >= 2


# --- every bad input: one line, the right exit status ----------------------------------------------------------

def _bad_inputs(tmp_path: Path):
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder")
    return [
        # (id, args, extra env, exit status, text the one line must contain)
        ("run without a name", ["run"], {}, 2, "Missing argument"),
        ("unknown option", ["run", "toy", "--bogus"], {}, 2, "No such option: --bogus"),
        ("n-trials not a number", ["tune", "toy", "--n-trials", "abc"], {}, 2, "Invalid value for '--n-trials'"),
        ("negative seed", ["run", "toy", "--seeds", "-1"], {}, 2, "--seeds: seeds must be non-negative"),
        ("empty seed range", ["run", "toy", "--seeds", "3-1"], {}, 2, "--seeds: the range '3-1' is empty"),
        ("empty seeds", ["run", "toy", "--seeds", ""], {}, 2, "--seeds: expected non-negative integers"),
        ("seeds not numbers", ["run", "toy", "--seeds", "x"], {}, 2, "--seeds: expected non-negative integers"),
        ("unknown experiment", ["run", "nope"], {}, 2, "unknown experiment 'nope'"),
        ("unknown profile", ["run", "toy", "--profile", "huge"], {}, 2,
         "toy.yaml: key 'profiles': expected a profile named one of"),
        ("unknown device", ["run", "toy", "--device", "tpu"], {}, 2, "--device: expected one of auto, cpu, cuda"),
        ("missing data dir", ["run", "toy", "--data-dir", str(tmp_path / "missing")], {}, 2, "is not a folder"),
        ("results dir is a file", ["run", "toy", "--profile", "quick", "--results-dir", str(a_file)], {}, 2,
         f"'{a_file}' is a file; expected a folder"),
        ("results dir under a file", ["run", "toy", "--profile", "quick", "--results-dir", str(a_file / "sub")], {},
         2, "is a file; expected a folder"),
        ("negative seed in a spec", ["run", "toy", "--profile", "quick"],
         {"FYEXP_EXPERIMENTS_DIR": str(_toy_spec(tmp_path / "s1", "seeds: [0]\n    values", "seeds: [-1]\n    values"))},
         2, "key 'profiles.quick.seeds': expected a non-empty list of distinct non-negative integers"),
        ("duplicate key in a spec", ["show", "toy"],
         {"FYEXP_EXPERIMENTS_DIR": str(_toy_spec(tmp_path / "s2", "paper: fyvi\n", "paper: fyvi\npaper: frac\n"))},
         2, "duplicate key 'paper'"),
        ("non-UTF-8 spec", ["show", "toy"],
         {"FYEXP_EXPERIMENTS_DIR": str(_toy_spec(tmp_path / "s3", "Toy experiment", "Toy exp\udcffriment"))},
         2, "not UTF-8 text (byte 0xff at line 2)"),
    ]


@pytest.mark.slow
def test_every_bad_input_is_one_line_with_the_right_exit_status(toy_env, tmp_path):
    for case_id, args, env, status, expected in _bad_inputs(tmp_path):
        result = run_cli(*args, env={**toy_env, **env})
        assert result.returncode == status, (case_id, result.returncode, result.stderr)
        line = _one_clean_line(result.stderr)
        assert line.startswith("error: ") and expected in line, (case_id, line)


@pytest.mark.slow
def test_errors_stay_on_one_line_in_a_narrow_terminal(toy_env, tmp_path):
    code, screen = run_in_terminal("run", "toy", "--seeds", "3-1", env=toy_env, columns=40)
    assert code == 2
    assert [line for line in strip_ansi(screen).splitlines() if line.strip()] == [
        "error: --seeds: the range '3-1' is empty (write it low-high, e.g. '1-3')"]


@pytest.mark.slow
def test_unwritable_results_folder_is_an_environment_error(toy_env, tmp_path):
    if os.geteuid() == 0:  # root writes through permission bits: use a read-only file system instead
        target = Path("/sys/fyexp-write-test")
        if os.access("/sys", os.W_OK) and not _refuses_writes(target):
            pytest.skip("no read-only location to test with on this machine")
    else:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        target = locked / "results"
    result = run_cli("run", "toy", "--profile", "quick", "--results-dir", str(target), env=toy_env)
    assert result.returncode == 1, result.stderr
    assert f"cannot write to '{target}'" in _one_clean_line(result.stderr)


def _refuses_writes(path: Path) -> bool:
    try:
        path.mkdir()
    except OSError:
        return True
    path.rmdir()
    return False


def test_disk_full_is_one_line_and_keeps_finished_cells(toy_env, tmp_path, monkeypatch, capsys):
    """ENOSPC in the middle of a run (simulated at the second cell's first fsync; a cell writes three files: its
    settings, its executed-code record, its rows): one line, exit 1, first cell kept."""
    import fyexp.cli
    import fyexp.store.io

    specs = _toy_spec(tmp_path, "values: [0.5]", "values: [1.0, 2.0, 3.0]")
    results = tmp_path / "results"
    monkeypatch.syspath_prepend(str(ROOT))
    real_fsync, calls = fyexp.store.io.os.fsync, []

    def fsync(fd):
        calls.append(fd)
        if len(calls) == 4:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_fsync(fd)

    monkeypatch.setattr(fyexp.store.io.os, "fsync", fsync)
    with pytest.raises(SystemExit) as exit_info:
        fyexp.cli.main(["run", "toy", "--profile", "quick", "--no-progress", "--experiments-dir", str(specs),
                        "--results-dir", str(results)])
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert "error: disk full" in err and "Traceback" not in err
    assert len(list((results / "toy" / "cells" / "quick").glob("*.csv"))) == 1
    assert not list((results / "toy" / "cells" / "quick").glob(".*.tmp"))


@pytest.mark.slow
def test_unexpected_error_is_one_line_and_debug_shows_the_traceback(toy_env, tmp_path):
    specs = _toy_spec(tmp_path, "runner: tests.toy_experiment", "runner: tests.toy_broken")
    broken = ROOT / "tests" / "toy_broken.py"
    assert broken.is_file()
    env = {**toy_env, "FYEXP_EXPERIMENTS_DIR": str(specs)}
    result = run_cli("run", "toy", "--profile", "quick", env=env)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    line = result.stderr.strip().splitlines()[-1]  # after the plain progress lines of the cell that broke
    assert line.startswith("error: unexpected ZeroDivisionError") and "--debug" in line
    debug = run_cli("--debug", "run", "toy", "--profile", "quick", env=env)
    assert debug.returncode == 1 and "Traceback" in debug.stderr


# --- damaged cell files, file modes ---------------------------------------------------------------------------

@pytest.mark.slow
def test_truncated_and_garbage_cell_files_are_redone_and_report_skips_them(toy_env):
    results = Path(toy_env["FYEXP_RESULTS_DIR"])
    first = run_cli("run", "toy", "--profile", "paper", "--allow-dirty", "--yes", env=toy_env)
    assert first.returncode == 0, first.stderr
    cells = sorted((results / "toy" / "cells" / "paper").glob("*.csv"))
    assert len(cells) == 4
    whole = cells[0].read_text()
    cells[0].write_text(whole[: len(whole) - 25])  # cut in the middle of its row
    cells[1].write_bytes(b"\x00\xff garbage, \"unclosed\n1,2\n")
    cells[2].write_text(cells[2].read_text().splitlines()[0] + "\n")  # the header alone
    report = run_cli("report", "toy", env=toy_env)
    assert report.returncode == 0 and "Traceback" not in report.stderr, report.stderr
    for path in cells[:3]:
        assert f"skipped damaged cell file {path}" in report.stderr
    assert len(pd.read_csv(results / "toy" / "results.csv")) == 1  # only the intact cell
    again = run_cli("run", "toy", "--profile", "paper", "--allow-dirty", env=toy_env)
    assert again.returncode == 0, again.stderr
    assert "3 cells run, 1 already finished" in " ".join(again.stderr.split())
    frame = pd.read_csv(results / "toy" / "results.csv")
    assert len(frame) == 4 and frame["value"].notna().all()


@pytest.mark.slow
def test_files_follow_the_umask(toy_env, tmp_path):
    results = Path(toy_env["FYEXP_RESULTS_DIR"])
    env = cli_env(toy_env)
    shell = f"umask 002 && exec {fyexp_script()} run toy --profile quick && {fyexp_script()} report toy"
    done = subprocess.run(["bash", "-c", shell], env=env, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    cell = next((results / "toy" / "cells" / "quick").glob("*.csv"))
    assert oct(cell.stat().st_mode & 0o777) == oct(0o664)
    assert oct((results / "toy" / "results.csv").stat().st_mode & 0o777) == oct(0o664)


# --- list, show -----------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_list_piped_names_every_experiment_in_full():
    result = run_cli("list", env={"COLUMNS": "80"})
    names = sorted(p.stem for p in EXPERIMENTS.glob("*.yaml"))
    listed = [line.split("\t")[0] for line in result.stdout.splitlines()]
    assert result.returncode == 0 and listed == names
    as_json = json.loads(run_cli("list", "--json").stdout)
    assert [entry["name"] for entry in as_json] == names and all(entry["profiles"] for entry in as_json)


@pytest.mark.slow
def test_list_in_a_narrow_terminal_never_cuts_a_name():
    code, screen = run_in_terminal("list", "--experiments-dir", str(EXPERIMENTS), columns=80)
    assert code == 0
    plain = strip_ansi(screen)
    for path in EXPERIMENTS.glob("*.yaml"):
        assert path.stem in plain, (path.stem, plain)


@pytest.mark.slow
def test_show_prints_unicode_and_messages_keep_the_profile(toy_env):
    shown = run_cli("show", "fy-vae", "--profile", "quick", "--experiments-dir", str(EXPERIMENTS))
    assert shown.returncode == 0 and "β" in shown.stdout and "\\u03B2" not in shown.stdout
    ran = run_cli("run", "toy", "--profile", "quick", env=toy_env)
    assert "toy [quick]: 1 cell run" in ran.stderr


# --- tune ------------------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_tune_two_trials_in_a_terminal(toy_env, tmp_path):
    results = Path(toy_env["FYEXP_RESULTS_DIR"])
    code, screen = run_in_terminal("tune", "toy", "--profile", "tune", "--n-trials", "2", env=toy_env)
    assert code == 0 and "Traceback" not in screen, strip_ansi(screen)[-3000:]
    import optuna

    study = optuna.load_study(study_name="toy-tune", storage=f"sqlite:///{results / 'toy' / 'study.db'}")
    assert len(study.trials) == 2 and all(t.state.name == "COMPLETE" for t in study.trials)
    assert (results / "toy" / "best_params-tune.yaml").is_file()
