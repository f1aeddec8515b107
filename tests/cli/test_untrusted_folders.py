"""A results folder or cache from someone else is data (issue 51, continued): caches verified before they are
unpickled, paths built from file content validated, writes and deletes kept inside the results folder, damaged
records read without blocking or recursing, grids and sample counts that cannot fit refused at the plan, SIGTERM
handled as Ctrl-C is, and two concurrent runs into one folder finishing every cell once.

Each case asserts the exit status, the one line (naming the file) and no traceback, and, for a hostile input, that
its payload did not run (a marker file absent) and nothing was written or deleted outside the folders fyexp was
given.  SIGTERM, the two concurrent runs, the endless read of ``/dev/zero`` and the runs over a foreign cache run
the installed ``fyexp`` script (a real process: its signal, its exit status, its memory, a cache read cold where
this process would find its own memos first); the other cases call its entry point in this process
(:func:`tests.in_process.run_here`: the same exit status and output, without importing torch again per case).
"""

from __future__ import annotations

import collections
import json
import os
import pickle
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from fyexp.store import user_cache
from fyexp.store.damaged import MAX_JSON_DEPTH, json_depth, read_json, read_record_bytes
from fyexp.store.results import ResultStore
from tests.conftest import TOY_SPECS, cli_env, fyexp_script, run_cli
from tests.in_process import run_here

TERMINATED = "terminated (SIGTERM): finished cells are saved; rerun the same command to resume"


class Payload:
    """Unpickling it calls ``exec``: the marker file appears if anything unpickles it."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return exec, (f"open({str(self.marker)!r}, 'w').write('code ran')",)


def _env(tmp_path: Path, **extra: str) -> dict:
    return {"FYEXP_EXPERIMENTS_DIR": str(TOY_SPECS), "FYEXP_RESULTS_DIR": str(tmp_path / "results"), **extra}


def _toy(tmp_path: Path, *sets: str, extra: tuple = (), env: dict | None = None,
         script: bool = False) -> subprocess.CompletedProcess:
    """``fyexp run toy -p quick`` with ``--set sets``: in this process, or through the installed script."""
    command = ["run", "toy", "-p", "quick", "--no-progress", *extra]
    for item in sets:
        command += ["--set", item]
    if script:
        return run_cli(*command, env=env or _env(tmp_path), timeout=300)
    return run_here(*command, env=env or _env(tmp_path), timeout=300)


def _no_traceback(result) -> str:
    assert "Traceback" not in result.stderr and "unexpected" not in result.stderr, result.stderr
    return " ".join(result.stderr.split())


def _files_outside(tmp_path: Path, *inside: str) -> set[str]:
    """Every file and link under ``tmp_path`` but outside its folders ``inside``."""
    return {str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")
            if (p.is_file() or p.is_symlink()) and not any(p.is_relative_to(tmp_path / d) for d in inside)}


def _cells(tmp_path: Path, profile: str = "quick") -> Path:
    return tmp_path / "results" / "toy" / "cells" / profile


# ---- SIGTERM and concurrent runs ----------------------------------------------------------------------------------
def _popen_toy(tmp_path: Path, *sets: str) -> subprocess.Popen:
    command = [fyexp_script(), "run", "toy", "-p", "quick", "--no-progress"]
    for item in sets:
        command += ["--set", item]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=cli_env(_env(tmp_path)))


@pytest.mark.slow
def test_sigterm_keeps_finished_cells_removes_temporaries_and_exits_143(tmp_path):
    log = tmp_path / "ran.log"
    sets = ("values=[1, 2, 3]", "sleep_s=2", f"log={log}")
    proc = _popen_toy(tmp_path, *sets)
    deadline = time.monotonic() + 240
    while not list((tmp_path / "results").rglob("toy__x=1__seed=0.csv")) and time.monotonic() < deadline:
        time.sleep(0.2)   # the first cell is finished: the second is in flight
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 143, stderr
    assert "Traceback" not in stderr and stderr.strip().splitlines()[-1] == TERMINATED
    results = tmp_path / "results" / "toy"
    assert not [p for p in results.rglob("*") if p.name.endswith((".tmp", ".claim"))]   # no temporary, no claim
    (profile,) = [p.name for p in (results / "cells").iterdir()]
    assert (results / "cells" / profile / "toy__x=1__seed=0.csv").is_file()         # the finished cell is kept
    assert not (results / "cells" / profile / "toy__x=3__seed=0.csv").exists()
    assert "toy__x=1__seed=0" in (results / "results.csv").read_text()               # and consolidated
    resumed = _toy(tmp_path, *sets)
    assert resumed.returncode == 0, resumed.stderr
    ran = collections.Counter(log.read_text().split())
    assert ran["toy__x=1__seed=0"] == 1 and ran["toy__x=3__seed=0"] == 1             # resumed, not redone


@pytest.mark.slow
def test_two_concurrent_runs_into_one_folder_finish_every_cell_once(tmp_path):
    log = tmp_path / "ran.log"
    sets = ("values=[1, 2, 3, 4, 5, 6]", "sleep_s=1", f"log={log}")
    runs = [_popen_toy(tmp_path, *sets) for _ in range(2)]
    outputs = [proc.communicate(timeout=300) for proc in runs]
    assert [proc.returncode for proc in runs] == [0, 0], outputs
    ran = collections.Counter(log.read_text().split())
    assert sorted(ran) == [f"toy__x={x}__seed=0" for x in range(1, 7)] and set(ran.values()) == {1}, ran
    assert "claimed by another job" in outputs[0][1] + outputs[1][1]                 # each took the other's cells
    said = [" ".join(err.split()) for _, err in outputs]
    ran_here = [int(re.search(r": (\d+) cells run, ", line).group(1)) for line in said]
    elsewhere = [int(m.group(1)) if (m := re.search(r"(\d+) run by another process", line)) else 0 for line in said]
    assert sum(ran_here) == 6 and [a + b for a, b in zip(ran_here, elsewhere)] == [6, 6], said   # what each did
    (profile,) = list((tmp_path / "results" / "toy" / "cells").iterdir())
    assert len(list(profile.glob("*.csv"))) == 6
    assert not list((tmp_path / "results").rglob("*.claim"))


# ---- caches: never unpickled unless this user signed them ----------------------------------------------------------
def _forged(marker: Path, signed_with: bytes | None) -> bytes:
    payload = pickle.dumps(Payload(marker))
    if signed_with is None:
        return payload                                            # a plain pickle, as fyexp wrote before tags
    return user_cache.MAGIC + user_cache._tag(signed_with, payload) + payload


@pytest.mark.slow
@pytest.mark.parametrize("forgery", ["plain pickle", "signed with another key"])
def test_a_foreign_cache_entry_is_never_unpickled_by_a_run(tmp_path, forgery):
    env = _env(tmp_path, FYEXP_CACHE_DIR=str(tmp_path / "cache"), FYEXP_CACHE_KEY_FILE=str(tmp_path / "key"))
    first = _toy(tmp_path, env=env, script=True)
    assert first.returncode == 0, first.stderr
    entries = sorted((tmp_path / "cache").rglob("*.pkl"))
    assert entries and all(p.read_bytes().startswith(user_cache.MAGIC) for p in entries)
    marker = tmp_path / "marker"
    for path in entries:   # the folder now as a colleague might share it: every entry carries a payload
        path.write_bytes(_forged(marker, None if forgery == "plain pickle" else os.urandom(32)))
    again = _toy(tmp_path, env=env, script=True)
    assert again.returncode == 0, again.stderr
    _no_traceback(again)
    assert not marker.exists()
    key = (tmp_path / "key").read_bytes()
    signed = [p for p in (tmp_path / "cache").rglob("*.pkl") if _signed_by(p.read_bytes(), key)]
    assert signed and not any(b"code ran" in p.read_bytes() for p in signed)   # derived again, saved signed


def _signed_by(data: bytes, key: bytes) -> bool:
    head = len(user_cache.MAGIC) + 32
    return data.startswith(user_cache.MAGIC) and data[len(user_cache.MAGIC):head] == user_cache._tag(key, data[head:])


def test_cache_entries_load_only_under_this_users_key(tmp_path, monkeypatch):
    monkeypatch.setenv("FYEXP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FYEXP_CACHE_KEY_FILE", str(tmp_path / "config" / "cache-key"))
    user_cache.save_entry("k", "n", ("key", 1), {"value": [1.5]})
    key_file = tmp_path / "config" / "cache-key"
    assert key_file.stat().st_mode & 0o777 == 0o600 and key_file.stat().st_size == user_cache.KEY_BYTES
    assert not key_file.is_relative_to(tmp_path / "cache")
    assert user_cache.load_entry("k", "n", ("key", 1)) == {"value": [1.5]}
    assert user_cache.load_entry("k", "n", ("key", 2)) is None                       # another key: a miss
    (entry,) = (tmp_path / "cache").rglob("*.pkl")
    data = entry.read_bytes()
    entry.write_bytes(data[:-2] + bytes([data[-2] ^ 1]) + data[-1:])                  # one bit of the pickle
    assert user_cache.load_entry("k", "n", ("key", 1)) is None
    entry.write_bytes(data)
    assert user_cache.load_entry("k", "n", ("key", 1)) == {"value": [1.5]}
    well_formed = pickle.dumps(("n", ("key", 1), {"value": "someone else's"}))      # the right entry, another key
    entry.write_bytes(user_cache.MAGIC + user_cache._tag(os.urandom(32), well_formed) + well_formed)
    assert user_cache.load_entry("k", "n", ("key", 1)) is None
    entry.write_bytes(data)
    key_file.chmod(0o640)                                                           # readable by the group
    assert user_cache.load_entry("k", "n", ("key", 1)) is None
    key_file.chmod(0o600)
    key_file.write_bytes(key_file.read_bytes()[:-1])                                # 31 bytes
    assert user_cache.load_entry("k", "n", ("key", 1)) is None
    key_file.unlink()
    key_file.symlink_to(tmp_path / "elsewhere")                                     # a link, even to a good key
    (tmp_path / "elsewhere").write_bytes(data[len(user_cache.MAGIC):][:32])
    (tmp_path / "elsewhere").chmod(0o600)
    assert user_cache.secret_key() is None and user_cache.load_entry("k", "n", ("key", 1)) is None


# ---- paths built from file content, writes and deletes inside the results folder ---------------------------------
def _rewrite_hash(cell_file: Path, new: str) -> str:
    import csv

    text = cell_file.read_text()
    (row,) = csv.DictReader(text.splitlines())
    cell_file.write_text(text.replace(row["settings_hash"], new))
    return row["settings_hash"]


@pytest.mark.slow
def test_a_settings_hash_that_is_a_path_is_a_damaged_file_never_a_path_part(tmp_path):
    first = _toy(tmp_path)
    assert first.returncode == 0, first.stderr
    cell = _cells(tmp_path) / "toy__x=0.5__seed=0.csv"
    _rewrite_hash(cell, "x/../../../escaped")
    before = _files_outside(tmp_path, "results")
    again = _toy(tmp_path)
    assert again.returncode == 0, again.stderr
    assert (f"warning: {cell}: damaged cell file (settings_hash 'x/../../../escaped' is not a settings hash (12 hex "
            "digits)); it will be redone") in _no_traceback(again)
    assert _files_outside(tmp_path, "results") == before and not (tmp_path / "results" / "toy" / "superseded").exists()
    assert "x/../" not in cell.read_text()                                            # redone at its own settings


@pytest.mark.slow
def test_a_settings_hash_of_the_fixed_pattern_names_its_superseded_file_inside_the_folder(tmp_path):
    first = _toy(tmp_path)
    assert first.returncode == 0, first.stderr
    cell = _cells(tmp_path) / "toy__x=0.5__seed=0.csv"
    _rewrite_hash(cell, "0123456789ab")                                               # other settings, a valid hash
    again = _toy(tmp_path)
    assert again.returncode == 0, again.stderr
    _no_traceback(again)
    assert (tmp_path / "results" / "toy" / "superseded" / "quick" / "toy__x=0.5__seed=0.0123456789ab.csv").is_file()


@pytest.mark.slow
@pytest.mark.parametrize("linked", ["work/quick", "cells/quick"])
def test_a_symlink_leaving_the_results_folder_stops_the_run_before_any_write(tmp_path, linked):
    outside = tmp_path / "precious"
    keep = outside / "toy__x=0.5__seed=0" / "notes.txt"
    keep.parent.mkdir(parents=True)
    keep.write_text("the user's own file")
    link = tmp_path / "results" / "toy" / linked
    link.parent.mkdir(parents=True)
    link.symlink_to(outside, target_is_directory=True)
    result = _toy(tmp_path, extra=("--force",))
    assert result.returncode == 2, result.stderr
    lines = [line for line in _no_traceback(result).split("error: ")[1:]]
    assert len(lines) == 1 and lines[0].startswith(f"{link}: a symbolic link leading out of the results folder "
                                                   f"{(tmp_path / 'results').resolve()} (to {outside.resolve()})")
    assert keep.read_text() == "the user's own file" and sorted(p.name for p in outside.rglob("*")) == \
        ["notes.txt", "toy__x=0.5__seed=0"]


def test_links_leaving_on_both_sides(tmp_path):
    store = ResultStore(tmp_path / "results", "toy")
    (store.folder / "artifacts").mkdir(parents=True)
    (store.folder / "real").mkdir()
    (store.folder / "artifacts" / "quick").symlink_to(store.folder / "real")         # inside: allowed
    (tmp_path / "results" / "other").mkdir()
    (store.folder / "to-sibling").symlink_to(tmp_path / "results" / "other")         # inside the results folder
    assert store.links_leaving() == []
    store.refuse_links_leaving()
    (store.folder / "real" / "record.json").symlink_to(tmp_path / "secret.json")      # a file outside
    assert store.links_leaving() == [(store.folder / "real" / "record.json", tmp_path / "secret.json")]
    elsewhere = ResultStore(tmp_path / "results", "moved")
    elsewhere.folder.symlink_to(tmp_path / "scratch")                                # the experiment folder itself
    assert elsewhere.links_leaving() == [(elsewhere.folder, tmp_path / "scratch")]


# ---- damaged records: no blocking read, no endless read, no recursion ----------------------------------------------
def _fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _dev_zero(path: Path) -> None:
    path.unlink()
    path.symlink_to("/dev/zero")


def _deep(path: Path) -> None:
    path.write_text("[" * 200_000 + "]" * 200_000)


# (case, the file damaged, how, the command's extra options, what the warning calls it, the problem it names):
# the plan (--dry-run) reads the run records; a run reads the cell files too, and redoes the cell; /dev/zero through
# the installed script (an endless read would fill this process's memory)
DAMAGED_RECORDS = [
    ("record.json a FIFO", ".record.json", _fifo, ["--dry-run"], "damaged run record", "not a regular file"),
    ("record.json linked to /dev/zero", ".record.json", _dev_zero, ["--dry-run"], "damaged run record",
     "a symbolic link"),
    ("record.json 200,000 nested [", ".record.json", _deep, ["--dry-run"], "damaged run record",
     f"nested deeper than {MAX_JSON_DEPTH} levels"),
    ("cell file a FIFO", ".csv", _fifo, [], "damaged cell file", "not a regular file"),
]


@pytest.mark.slow
@pytest.mark.parametrize("name, suffix, damage, options, what, problem", DAMAGED_RECORDS,
                         ids=[c[0] for c in DAMAGED_RECORDS])
def test_a_damaged_record_is_one_warning_and_no_hang(tmp_path, name, suffix, damage, options, what, problem):
    first = _toy(tmp_path)
    assert first.returncode == 0, first.stderr
    path = _cells(tmp_path) / f"toy__x=0.5__seed=0{suffix}"
    damage(path)
    command = ("run", "toy", "-p", "quick", "--no-progress", *options)
    if damage is _dev_zero:
        result = run_cli(*command, env=_env(tmp_path), timeout=120)
    else:
        result = run_here(*command, env=_env(tmp_path), timeout=120)
    assert result.returncode == 0, result.stderr   # a blocking or endless read: the timeout
    text = _no_traceback(result)
    assert (f"{path} ({problem}" in text or f"{path}: {what} ({problem}" in text) and what in text, text


def test_read_json_limits_on_both_sides(tmp_path):
    path = tmp_path / "r.json"
    path.write_text("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH)
    assert read_json(path)[1] is None
    path.write_text("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1))
    assert read_json(path) == (None, f"nested deeper than {MAX_JSON_DEPTH} levels")
    shallow = '{"a": "%s", "b": [[1]]}' % ("[" * (2 * MAX_JSON_DEPTH))             # many brackets, depth 3: scanned
    path.write_text(shallow)
    assert read_json(path) == ({"a": "[" * (2 * MAX_JSON_DEPTH), "b": [[1]]}, None)
    assert read_json(path, member="b") == ([[1]], None) and read_json(path, member="c") == (None, None)
    path.write_text('{"a": "[[[[[[[[", "b": [1]}')                                   # brackets in a string
    assert json_depth(path.read_text()) == 2 and read_json(path) == ({"a": "[[[[[[[[", "b": [1]}, None)
    path.write_text('"\\\\"')                                                         # an escaped backslash
    assert read_json(path) == ("\\", None)
    path.write_bytes(b"[1]  ")
    assert read_record_bytes(path, limit=5) == (b"[1]  ", None)
    assert read_record_bytes(path, limit=4) == (None, "5 bytes, more than the 4 a record may have")
    assert read_json(tmp_path / "absent.json")[1].startswith("cannot be read")
    assert read_record_bytes(tmp_path)[1] == "not a regular file (a FIFO, a device or a folder)"


# ---- grids and sample counts that cannot fit, refused at the plan --------------------------------------------------
def test_grid_points_are_counted_before_any_is_built(monkeypatch):
    from fyexp.core.errors import FyexpError
    from fyexp.experiments import grid

    monkeypatch.setattr(grid, "MAX_GRID_POINTS", 12)
    grid.check_grid_points({"a": [1, 2, 3], "b": [1, 2]}, [{"a": 9, "b": [7, 8]}], seeds=1)     # 6 + 2 = 8
    grid.check_grid_points({"a": [1, 2, 3], "b": [1, 2]}, (), seeds=2)                         # 12
    with pytest.raises(FyexpError, match=r"^the grid has up to 13 cells \(13\), more than the 12 a run may list"):
        grid.check_grid_points({"a": list(range(13))}, ())
    with pytest.raises(FyexpError, match=r"up to 14 cells \(3 × 2 × 2 seeds\)"):
        grid.check_grid_points({"a": [1, 2, 3], "b": [1, 2]}, [{"a": 9}], seeds=2)           # (6 + 1) × 2
    built = []
    monkeypatch.setattr(grid, "_product", lambda values: built.append(values) or [])
    with pytest.raises(FyexpError):
        grid.expand({"a": list(range(4)), "b": list(range(4))})                               # 16 > 12
    assert built == []                                                                         # refused before


def test_gmm_clustering_memory_estimate_counts_points_and_components():
    from fyexp.core.constraints import check_cell_memory
    from fyexp.core.errors import FyexpError
    from fyexp.experiments import get_experiment
    from fyexp.experiments.gmm_clustering_config import GMMClusteringConfig

    experiment = get_experiment("gmm_clustering")
    config = GMMClusteringConfig(n_samples=1000, n_outliers=100)
    cell = experiment.cells(config, [0])[0]
    need, what = experiment.memory_estimate(config, cell)
    assert need == 8 * 4 * (2 + 4) * 1100 and "1,100 points" in what
    check_cell_memory(experiment, config, [cell], yes=False, available=need)
    with pytest.raises(FyexpError, match=r"would need about"):
        check_cell_memory(experiment, config, [cell], yes=False, available=need - 1)


def test_seed_ranges_are_bounded_before_the_list_is_built(monkeypatch):
    from fyexp.spec import specs
    from fyexp.core.errors import FyexpError

    monkeypatch.setattr(specs, "MAX_SEEDS", 5)
    assert specs.parse_seeds("0-2,7,9") == [0, 1, 2, 7, 9]
    with pytest.raises(FyexpError, match=r"^--seeds: 6 seeds, more than the 5 a run may have"):
        specs.parse_seeds("0-2,7-9")


def _values(low: float, count: int, step: float) -> str:
    return "[" + ", ".join(f"{low + i * step:g}" for i in range(count)) + "]"


PLAN_CASES = [
    ("a grid of 2·10⁶ cells", ["run", "frac-vae", "-p", "quick", "--dry-run", "--set",
                              "grid.latent=" + _values(1, 1000, 1), "--set", "grid.value=" + _values(0.001, 1000, 0.001)],
     "error: the grid has up to 2,000,009 cells (2 × 1 × 1000 × 1 × 1000 × 1), more than the 1,000,000 a run may list"),
    ("n_samples=10¹²", ["run", "gmm-clustering", "-p", "quick", "--dry-run", "--set", "n_samples=1000000000000"],
     "error: cell standard__seed=0 would need about 178,813.9 GiB (n_samples + n_outliers = 1,000,000,000,100 points"),
    ("4·10⁹ seeds", ["run", "gmm-clustering", "-p", "quick", "--dry-run", "--seeds", "0-4294967295"],
     "error: --seeds: 4,294,967,296 seeds, more than the 100,000 a run may have"),
]


@pytest.mark.slow
@pytest.mark.parametrize("name, command, line", PLAN_CASES, ids=[c[0] for c in PLAN_CASES])
def test_what_cannot_fit_is_refused_at_the_plan(tmp_path, name, command, line):
    result = run_here(*command, env={"FYEXP_RESULTS_DIR": str(tmp_path / "results")})
    assert result.returncode == 2, result.stderr
    errors = [row for row in result.stderr.splitlines() if row.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(line), result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "results").exists()


def test_a_key_path_that_is_a_folder_or_a_fifo_switches_the_cache_off(tmp_path, monkeypatch):
    monkeypatch.setenv("FYEXP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FYEXP_CACHE_KEY_FILE", str(tmp_path / "key"))
    (tmp_path / "key").mkdir()
    user_cache.save_entry("k", "n", 1, "v")
    assert user_cache.load_entry("k", "n", 1) is None and not (tmp_path / "cache").exists()
    (tmp_path / "key").rmdir()
    os.mkfifo(tmp_path / "key")                                                      # opened without blocking
    assert user_cache.secret_key() is None


@pytest.mark.parametrize("damage", ["garbage weights", "a pickled payload", "accuracy out of range", "a FIFO"])
def test_a_damaged_fid_proxy_cache_is_one_warning_and_trained_again(tmp_path, capsys, damage):
    import torch

    from fyexp.metrics import fid as F

    g = torch.Generator().manual_seed(1)
    labels = torch.randint(0, 10, (32,), generator=g)
    images = torch.rand(32, 784, generator=g)
    settings = F.ProxySettings(n_train=32, epochs=1, batch_size=16)
    _, accuracy = F.cached_proxy(tmp_path, images, labels, images, labels, settings)
    weights, meta = tmp_path / f"proxy-{settings.key}.pt", tmp_path / f"proxy-{settings.key}.json"
    marker = tmp_path / "marker"
    if damage == "garbage weights":
        weights.write_bytes(b"PK\x03\x04 cut short")
    elif damage == "a pickled payload":
        torch.save({"fc.weight": Payload(marker)}, weights)
    elif damage == "accuracy out of range":
        meta.write_text(json.dumps({"test_accuracy": 5.0}))
    else:
        meta.unlink()
        os.mkfifo(meta)
    capsys.readouterr()
    _, again = F.cached_proxy(tmp_path, images, labels, images, labels, settings)
    err = " ".join(capsys.readouterr().err.split())
    assert again == accuracy and not marker.exists()
    if damage == "a FIFO":   # not a cached pair at all (never opened): trained again, the FIFO replaced by the file
        assert meta.is_file() and not err
    else:
        damaged = meta if damage == "accuracy out of range" else weights
        assert f"warning: damaged FID proxy cache {damaged} (" in err and "trained again" in err, err
    assert F.cached_proxy(tmp_path, images[:1], labels[:1], images, labels, settings)[1] == accuracy  # rewritten


def test_tune_refuses_a_symlink_leaving_the_results_folder(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    link = tmp_path / "results" / "toy" / "work"
    link.parent.mkdir(parents=True)
    link.symlink_to(outside, target_is_directory=True)
    result = run_here("tune", "toy", "-p", "tune", "--n-trials", "1", env=_env(tmp_path))
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(f"error: {link}: a symbolic link leading out of the results "
                                                     "folder"), result.stderr
    assert list(outside.iterdir()) == [] and "Traceback" not in result.stderr


@pytest.mark.parametrize("status, problem", [(b"\xffgarbage", "not UTF-8 text"), (b"\x00garbage", "not JSON"),
                                             (b"[1, 2]", "a JSON list"),
                                             (b"{" * 100_000, f"nested deeper than {MAX_JSON_DEPTH} levels"),
                                             (None, "not a regular file")])
def test_the_kits_merge_reads_a_damaged_status_file_as_one_warning(tmp_path, capsys, status, problem):
    import tarfile

    from gpu_kit.bundle import CELLS_ARCHIVE, STATUS_FILE, merge

    out = tmp_path / "out"
    out.mkdir()
    with tarfile.open(out / CELLS_ARCHIVE, "w:gz"):
        pass                                                                          # a job that finished no cell
    if status is None:
        os.mkfifo(out / STATUS_FILE)
    else:
        (out / STATUS_FILE).write_bytes(status)
    summary = merge(out, tmp_path / "home", tmp_path / "lease")
    assert summary.status is None
    assert f"warning: damaged status file {out / STATUS_FILE} ({problem}" in " ".join(capsys.readouterr().err.split())
    (out / STATUS_FILE).unlink()
    (out / STATUS_FILE).write_text(json.dumps({"collected": []}))
    assert merge(out, tmp_path / "home", tmp_path / "lease").status == {"collected": []}


@pytest.mark.parametrize("hostile", ["a cell naming a path", "a fit that is a FIFO", "a fit that is not JSON",
                                     "a trace of text"])
def test_a_derived_row_reads_only_its_own_fit_file_as_data(tmp_path, capsys, hostile):
    import pandas as pd

    from fyexp.claims.derived import LARGEST_DROP, with_derived

    folder = tmp_path / "tvem-bsc"
    fits = folder / "artifacts" / "paper" / "fits"
    fits.mkdir(parents=True)
    cell = "../../../../outside" if hostile == "a cell naming a path" else "tvem__n_states=5__seed=0"
    (tmp_path / "outside.json").write_text(json.dumps({"free_energy": [3.0, 1.0]}))   # what the path would read
    fit = fits / "tvem__n_states=5__seed=0.json"
    if hostile == "a fit that is a FIFO":
        os.mkfifo(fit)
    else:
        fit.write_text({"a fit that is not JSON": "{", "a trace of text": '{"free_energy": ["x", "y"]}'}.get(
            hostile, json.dumps({"free_energy": [-70.0, -65.0]})))
    rows = pd.DataFrame([{"experiment": "tvem-bsc", "profile": "paper", "cell": cell, "metric": "free_energy",
                          "value": -60.0, "seed": 0, "git_commit": "abc"}])
    out = with_derived("tvem-bsc", rows, folder)
    assert out[out["metric"] == LARGEST_DROP].empty                                # nothing derived from elsewhere
    err = " ".join(capsys.readouterr().err.split())
    if hostile == "a cell naming a path":
        assert err == ""
    else:
        assert f"warning: damaged fit file {fit} (" in err and f"its {LARGEST_DROP} is not derived" in err
    good = pd.DataFrame([{**rows.iloc[0].to_dict(), "cell": "tvem__n_states=5__seed=0"}])
    if hostile == "a cell naming a path":                                          # the other side: its own fit
        assert list(with_derived("tvem-bsc", good, folder).query("metric == @LARGEST_DROP")["value"]) == [-5.0]
