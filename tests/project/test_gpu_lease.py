"""``scripts/gpu_lease.py`` end to end on the CPU, on tiny made data: pack → run (stopped by its budget after one
epoch) → merge (checkpoints kept) → run again (resumes, two workers) → merge → ``fyexp report``; the cells equal
those ``fyexp run`` gives for the same selection, trained uninterrupted and one seed at a time."""

from __future__ import annotations

import importlib.util
import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.conftest import ROOT, call_main, run_in_process

pytestmark = pytest.mark.slow  # spawns the installed script or runs for seconds: not in the fast lane

SCRIPT = ROOT / "scripts" / "gpu_lease.py"
TINY = ["n_train=300", "n_valid=100", "n_test=50", "hidden=16", "latent=4", "train.batch_size=100",
        "train.epochs=3", "n_reconstructions=4", "n_prior_samples=4"]
SETS = [a for s in TINY for a in ("--set", s)]
ONLY = ["--only", "dataset=MNIST", "--only", "obs_rho=1", "--only", "regularizer=fy", "--only", "latent_rho=1,1.5"]
FIRST = "bernoulli-gaussian__dataset=MNIST__latent_rho=1__obs_rho=1__regularizer=fy__seeds=0,1"
SECOND = "bernoulli-biweight__dataset=MNIST__latent_rho=1.5__obs_rho=1__regularizer=fy__seeds=0,1"


def _script_module():
    spec = importlib.util.spec_from_file_location("gpu_lease_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def lease(*args: str, cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess:
    """``scripts/gpu_lease.py ARGS`` spawned, as on the device."""
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout)


def lease_here(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``scripts/gpu_lease.py ARGS`` through its ``main`` in this process (pack, merge: no interpreter to start)."""
    return call_main(_script_module().main, list(args), cwd=cwd)


def make_mnist(root: Path, n_train: int = 400, n_test: int = 50) -> None:
    """Tiny MNIST idx files in torchvision's layout (random gray levels)."""
    raw = root / "MNIST" / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)

    def idx(name, array):
        header = struct.pack(">I", 0x0800 | array.ndim) + b"".join(struct.pack(">I", d) for d in array.shape)
        (raw / name).write_bytes(header + array.astype(np.uint8).tobytes())

    idx("train-images-idx3-ubyte", rng.integers(0, 256, (n_train, 28, 28)))
    idx("train-labels-idx1-ubyte", rng.integers(0, 10, (n_train,)))
    idx("t10k-images-idx3-ubyte", rng.integers(0, 256, (n_test, 28, 28)))
    idx("t10k-labels-idx1-ubyte", rng.integers(0, 10, (n_test,)))


def _histories(scratch: Path) -> dict[str, list[dict]]:
    return {p.parent.name: pd.read_csv(p).to_dict("records")
            for p in (scratch / "results").glob("fy-vae/work/*/*/metrics.csv")}


@pytest.fixture(scope="module")
def flow(tmp_path_factory):
    """The whole flow once; the tests read what each step left."""
    from fyexp.store.provenance.source import git_commit

    base = tmp_path_factory.mktemp("lease")
    make_mnist(base / "data")
    done = lease_here("pack", "--experiment", "fy-vae", "--profile", "quick", *ONLY, "--seeds", "0,1", *SETS,
                 "--data-dir", "data", "--results-dir", "home", "--lease-dir", "gl", cwd=base)
    assert done.returncode == 0, done.stderr
    manifest = json.loads((base / "gl" / "manifest.json").read_text())

    # job 1, in this process: "time" passes once an epoch is checkpointed, so the budget stops the first unit
    # at the start of its second epoch, and the second unit never starts
    def epoch_clock():
        return 1000.0 if any(len(h) for h in _histories(base / "scratch1").values()) else 0.0

    module = _script_module()
    saved_path = list(sys.path)
    with pytest.MonkeyPatch.context() as patch:
        for name in ("FYEXP_GIT_COMMIT", "FYEXP_CACHE_DIR", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "PYTHONPATH"):
            patch.setenv(name, "")
            patch.delenv(name)
        patch.chdir(base)
        code = module.main(["run", "--lease-dir", "gl", "--out", "out1", "--device", "cpu", "--results-dir", "home",
                            "--scratch", "scratch1", "--budget-s", "500", "--jobs", "1"], clock=epoch_clock)
    sys.path[:] = saved_path
    git_commit.cache_clear()
    assert code == 0
    after_job1 = _histories(base / "scratch1")
    merge1 = lease_here("merge", "out1", "--results-dir", "home", "--lease-dir", "gl", cwd=base)
    job2 = lease("run", "--lease-dir", "gl", "--out", "out2", "--device", "cpu", "--results-dir", "home",
                 "--scratch", "scratch2", "--jobs", "2", cwd=base)
    assert job2.returncode == 0, job2.stderr
    merge2 = lease_here("merge", "out2", "--results-dir", "home", "--lease-dir", "gl", cwd=base)
    assert merge2.returncode == 0, merge2.stderr
    direct = run_in_process("run", "fy-vae", "--profile", "quick", *ONLY, "--seeds", "0,1", *SETS, "--device", "cpu",
                     "--data-dir", str(base / "data"), "--results-dir", str(base / "direct"), "--no-progress")
    assert direct.returncode == 0, direct.stderr
    return {"base": base, "manifest": manifest, "after_job1": after_job1, "merge1": merge1, "job2": job2,
            "merge2": merge2, "status1": json.loads((base / "out1" / "lease-status.json").read_text()),
            "status2": json.loads((base / "out2" / "lease-status.json").read_text())}


def _cells(results: Path) -> pd.DataFrame:
    return pd.read_csv(results / "fy-vae" / "results.csv")


def test_pack_makes_one_ensemble_unit_per_cell_and_packs_its_data(flow):
    units = flow["manifest"]["units"]
    assert [(u["method"], u["seeds"], u["ensemble"]) for u in units] == [
        ("bernoulli-gaussian", [0, 1], True), ("bernoulli-biweight", [0, 1], True)]
    assert list(flow["manifest"]["data"]) == ["MNIST"]
    assert (flow["base"] / "gl" / "data" / "MNIST.tar.xz").is_file()
    assert (flow["base"] / "gl" / "site" / "entmax" / "__init__.py").is_file()


def test_budget_stops_between_epochs_and_returns_whole_checkpoints(flow):
    status = flow["status1"]
    assert status["units"] == {FIRST: "stopped by budget", SECOND: "not started"}
    assert status["cells"] == [] and status["work_returned"] == [FIRST]
    assert sorted(len(h) for h in flow["after_job1"].values()) == [1, 1]   # both members at epoch 1, none at 2
    assert "2 checkpoint part(s) kept" in flow["merge1"].stdout


def test_second_job_resumes_the_checkpoints_and_finishes_every_cell(flow):
    assert flow["status2"]["units"] == {FIRST: "finished", SECOND: "finished"}
    histories = _histories(flow["base"] / "scratch2")
    for key, first in flow["after_job1"].items():
        assert len(histories[key]) == 3
        assert histories[key][0]["train_loss"] == first[0]["train_loss"]   # epoch 1 was not trained again
    assert "merge: 4 cells into home" in flow["merge2"].stdout
    assert "0 of the pack's 2 units still have missing cells" in flow["merge2"].stdout


def test_lease_cells_are_the_cells_fyexp_run_gives(flow):
    lease_rows, direct = _cells(flow["base"] / "home"), _cells(flow["base"] / "direct")
    keys = ["profile", "cell", "metric"]
    both = lease_rows.merge(direct, on=keys, suffixes=("_lease", "_run"), validate="one_to_one")
    assert len(both) == len(direct) == len(lease_rows)
    assert (both["settings_hash_lease"] == both["settings_hash_run"]).all()
    numbers = both[~both["metric"].isin(["epoch_time_s"])]
    np.testing.assert_allclose(numbers["value_lease"], numbers["value_run"], rtol=1e-5)
    assert lease_rows["device"].str.startswith("cpu (").all()
    assert set(lease_rows["git_commit"]) == {flow["manifest"]["git_commit"]}


def test_report_reads_the_merged_rows(flow):
    results = flow["base"] / "home"
    done = run_in_process("report", "fy-vae", "--results-dir", str(results))
    assert done.returncode == 0, done.stderr
    index = (results / "README.md").read_text()
    profile = _cells(results)["profile"].iloc[0]
    assert f"- `{profile}`: 4 cell(s) finished, 0 failed" in index


def test_merge_twice_changes_nothing_and_a_conflict_is_refused_in_one_line(flow, tmp_path):
    base = flow["base"]
    again = lease_here("merge", "out2", "--results-dir", "home", cwd=base)
    assert again.returncode == 0 and "0 cells into home" in again.stdout and "4 merged before" in again.stdout
    home = tmp_path / "home"
    cell = next((base / "home" / "fy-vae" / "cells").glob("*/bernoulli-gaussian*seed=0.csv"))
    target = home / cell.relative_to(base / "home")
    target.parent.mkdir(parents=True)
    frame = pd.read_csv(cell)
    frame.loc[0, "value"] += 1.0
    frame.to_csv(target, index=False)
    refused = lease_here("merge", str(base / "out2"), "--results-dir", str(home), cwd=base)
    lines = [line for line in refused.stderr.splitlines() if line.strip()]
    assert refused.returncode == 2 and len(lines) == 1 and "Traceback" not in refused.stderr
    assert lines[0].startswith("error: merge: cell fy-vae/") and "nothing merged" in lines[0]
    assert len(list(target.parent.glob("*.csv"))) == 1 and pd.read_csv(target).equals(frame)
    skipped = lease_here("merge", str(base / "out2"), "--results-dir", str(home), "--skip-conflicts", cwd=base)
    assert skipped.returncode == 0 and "3 cells into" in skipped.stdout and "1 conflicting, skipped" in skipped.stdout
    assert pd.read_csv(target).equals(frame)


def test_pack_leaves_out_finished_cells_whatever_machine_ran_them(flow, tmp_path):
    from gpu_kit.queue import QueueEntry, missing_units

    home = tmp_path / "home"
    shutil.copytree(flow["base"] / "home", home)
    entry = QueueEntry("t", "fy-vae", "quick", only=(("dataset", ("MNIST",)), ("obs_rho", ("1",)),
                                                     ("regularizer", ("fy",)), ("latent_rho", ("1",))),
                       seeds=(0, 1), sets=tuple(TINY))
    assert missing_units([entry], home) == []
    sidecars = sorted(home.glob("fy-vae/cells/*/bernoulli-gaussian*.record.json"))

    def recorded(sidecar, settings):  # the cell as a run at ``settings`` leaves it: record and rows agree
        from fyexp.store.provenance.record import settings_hash

        sidecar.write_text(json.dumps({**json.loads(sidecar.read_text()), "settings": settings}))
        cell_file = sidecar.with_name(sidecar.name.replace(".record.json", ".csv"))
        pd.read_csv(cell_file).assign(settings_hash=settings_hash(settings)).to_csv(cell_file, index=False)

    first = json.loads(sidecars[0].read_text())["settings"]
    recorded(sidecars[0], {**first, "environment": {"device_kind": "cuda", "torch": "9.9", "numpy": "9.9"}})
    assert missing_units([entry], home) == []                                         # run on another machine
    second = json.loads(sidecars[1].read_text())["settings"]
    recorded(sidecars[1], {**second, "config": {**second["config"], "hidden": 17}})   # at other settings
    (unit,) = missing_units([entry], home)
    assert (unit.seeds, unit.ensemble) == ([1], False)


def test_dry_run_states_its_assumptions_and_flips_with_the_budget(flow):
    from gpu_kit.estimate import Assumptions, estimate
    from gpu_kit.queue import Unit

    home = flow["base"] / "home"
    unit = Unit.from_json(flow["manifest"]["units"][0])
    (measured,) = estimate([unit], home, Assumptions(speedup=4.0, ensemble_cost=0.5, jobs=1))
    recorded = _cells(home)
    walls = recorded[recorded["cell"].str.startswith("bernoulli-gaussian")].groupby("cell")["wall_time_s"].first()
    assert measured.cpu_cell_s == pytest.approx(float(np.median(walls)), rel=0.05)  # the nearest cells: these two
    assert measured.gpu_s == pytest.approx(measured.cpu_cell_s / 4.0 * 1.5)
    fits = Assumptions(speedup=4.0, ensemble_cost=0.5, jobs=1, jobs_per_allocation=1, budget_s=measured.gpu_s * 1.01)
    short = Assumptions(speedup=4.0, ensemble_cost=0.5, jobs=1, jobs_per_allocation=1, budget_s=measured.gpu_s * 0.99)
    assert estimate([unit], home, fits)[0].finishes and not estimate([unit], home, short)[0].finishes
    # the room is the repository's tree's complement: a generous --max-mib keeps this independent of how much
    # the committed results weigh (the tree's own budget is test_the_tree_leaves_room_for_mnist_beside_the_reserve)
    dry = ["pack", "--dry-run", "--experiment", "fy-vae", "--profile", "quick", *ONLY, "--seeds", "0,1", *SETS,
           "--results-dir", str(tmp := flow["base"] / "empty")]
    text = lease_here(*dry, "--max-mib", "4096", cwd=flow["base"]).stdout
    assert "ASSUMPTIONS" in text and FIRST in text and "unknown" in text and not tmp.exists()
    assert "Room for data:" in text and "later pack" not in text and "does not fit even alone" not in text
    squeezed = lease_here(*dry, "--max-mib", "4096", "--reserve-mib", "4090", cwd=flow["base"]).stdout
    assert FIRST not in squeezed and "Left for a later pack" in squeezed and "2 units (4 cells)" in squeezed
    assert "MNIST (9.0 MiB packed) does not fit even alone" in squeezed


def test_never_fits_names_only_left_out_data_sets_larger_than_the_room():
    from types import SimpleNamespace

    module = _script_module()
    mib = module.MiB
    sizes = {"MNIST": 11 * mib, "freyface": 1 * mib, "caltech": 2 * mib}
    later = [SimpleNamespace(data=["MNIST"]), SimpleNamespace(data=["freyface", "caltech"])]
    lines = module.never_fits(later, chosen=["caltech"], room=10 * mib, size=sizes.__getitem__)
    assert len(lines) == 1 and lines[0].startswith("MNIST (11.0 MiB packed)") and "10.0 MiB" in lines[0]
    assert module.never_fits(later, chosen=[], room=11 * mib, size=sizes.__getitem__) == []   # fits alone: later
    assert len(module.never_fits(later, chosen=[], room=11 * mib - 1, size=sizes.__getitem__)) == 1  # a byte short
    assert [line.split(" ")[0] for line in module.never_fits(later, [], mib // 2, sizes.__getitem__)] == [
        "MNIST", "caltech", "freyface"]
    assert [line.split(" ")[0] for line in module.never_fits(later, ["caltech"], mib // 2, sizes.__getitem__)] == [
        "MNIST", "freyface"]   # a data set packed already is not named, however large


def test_the_tree_leaves_room_for_mnist_beside_the_reserve():
    """The device tool carries the whole working tree (64 MiB with what is carried); the committed results must
    leave room for the paper queue's MNIST cells beside the default checkpoint reserve.  When this fails, slim
    what is committed (figures, artifacts) rather than the reserve."""
    module = _script_module()
    tree = module.travelling_bytes()
    if tree is None:
        pytest.skip("not a git checkout: the tree's size is unknown")
    from gpu_kit.data import TYPICAL_PACKED_MIB

    args = module.parser().parse_args(["pack"])
    max_mib, reserve_mib = args.max_mib, args.reserve_mib
    room = (max_mib - 1) * module.MiB - tree - reserve_mib * module.MiB
    assert room >= TYPICAL_PACKED_MIB["MNIST"] * module.MiB, (
        f"the tracked tree is {tree / module.MiB:.1f} MiB: MNIST ({TYPICAL_PACKED_MIB['MNIST']} MiB packed) no "
        f"longer travels beside the {reserve_mib:g} MiB checkpoint reserve within {max_mib:g} MiB")


def test_a_time_recorded_on_cuda_replaces_the_assumptions(flow, tmp_path):
    from gpu_kit.estimate import Assumptions, estimate
    from gpu_kit.queue import Unit

    home = tmp_path / "home"
    shutil.copytree(flow["base"] / "home", home)
    table = home / "fy-vae" / "results.csv"
    frame = pd.read_csv(table)
    frame["device"] = "cuda (a GPU)"
    frame["wall_time_s"] = 7.0
    frame.to_csv(table, index=False)
    (e,) = estimate([Unit.from_json(flow["manifest"]["units"][0])], home, Assumptions(speedup=1000.0))
    assert e.measured and e.gpu_s == pytest.approx(7.0)


def test_collect_returns_an_ensembles_checkpoints_whole_or_not_at_all(flow, tmp_path):
    from gpu_kit.bundle import WORK_PREFIX, collect, merge
    from gpu_kit.queue import Unit

    units = [Unit.from_json(u) for u in flow["manifest"]["units"]]
    scratch = flow["base"] / "scratch1" / "results"
    one = collect(scratch, tmp_path / "one", units, max_work_files=1)
    assert one["work_dropped"] == [FIRST] and not list((tmp_path / "one").glob(f"{WORK_PREFIX}*"))
    two = collect(scratch, tmp_path / "two", units, max_work_files=2)
    assert two["work_returned"] == [FIRST] and len(list((tmp_path / "two").glob(f"{WORK_PREFIX}*"))) == 2
    whole = sorted((tmp_path / "two").glob(f"{WORK_PREFIX}*"))
    piece = max(p.stat().st_size for p in whole) // 3 + 1   # a folder over one file's limit: three pieces each
    split = collect(scratch, tmp_path / "split", units, max_work_files=6, part_limit=piece)
    assert split["work_returned"] == [FIRST] and len(list((tmp_path / "split").glob(f"{WORK_PREFIX}*"))) == 6
    assert collect(scratch, tmp_path / "few", units, max_work_files=5, part_limit=piece)["work_dropped"] == [FIRST]
    shutil.copyfile(flow["base"] / "out1" / "lease-status.json", tmp_path / "split" / "lease-status.json")
    merged = merge(tmp_path / "split", tmp_path / "results", tmp_path / "gl")
    assert merged.state_parts == 2
    for part in whole:   # joined again into the very archives that came back whole
        assert (tmp_path / "gl" / "state" / part.name.rsplit(".", 1)[0]).read_bytes() == part.read_bytes()


def test_a_damaged_data_pack_is_refused(tmp_path):
    from fyexp.core.errors import FyexpError
    from gpu_kit.data import pack_data_set, unpack_data_set

    make_mnist(tmp_path / "data", n_train=20, n_test=5)
    pack = tmp_path / "MNIST.tar.xz"
    record = pack_data_set("MNIST", tmp_path / "data", pack)
    unpack_data_set(record, pack, tmp_path / "root")
    for relative in record["files"]:
        assert (tmp_path / "root" / relative).read_bytes() == (tmp_path / "data" / relative).read_bytes()
    assert pack_data_set("MNIST", tmp_path / "data", tmp_path / "again.tar.xz") == {**record, "file": "again.tar.xz"}
    assert (tmp_path / "again.tar.xz").read_bytes() == pack.read_bytes()   # the same files pack to the same bytes
    damaged = {**record, "files": {**record["files"]}}
    damaged["files"]["MNIST/raw/t10k-labels-idx1-ubyte"] = {"bytes": 1, "sha256": "0" * 64}
    with pytest.raises(FyexpError, match="does not match its checksum"):
        unpack_data_set(damaged, pack, tmp_path / "again")
    truncated = tmp_path / "truncated.tar.xz"
    truncated.write_bytes(pack.read_bytes()[: pack.stat().st_size // 2])
    with pytest.raises(FyexpError, match="cannot be read as a data pack"):
        unpack_data_set(record, truncated, tmp_path / "again")
    with pytest.raises(FyexpError, match="cannot be read as a data pack"):   # a member the record names is absent
        unpack_data_set({"files": {"MNIST/raw/other": record["files"]["MNIST/raw/t10k-labels-idx1-ubyte"]}}, pack,
                        tmp_path / "again")


def test_run_without_cuda_says_so_in_one_line(flow):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    done = lease("run", "--lease-dir", "gl", "--out", "out3", "--device", "cuda", "--scratch", "scratch3",
                 cwd=flow["base"])
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1 and "sees no CUDA device" in lines[0]
    assert json.loads((flow["base"] / "out3" / "lease-status.json").read_text())["collected"] is False


def test_missing_modules_names_what_is_absent():
    from gpu_kit.device import missing_modules

    assert missing_modules(("numpy", "surely_no_module_of_this_name")) == ["surely_no_module_of_this_name"]


def test_merge_keeps_returned_checkpoints_only_while_they_can_travel_again(flow, tmp_path):
    from gpu_kit.bundle import merge

    out1 = flow["base"] / "out1"
    kept = merge(out1, tmp_path / "results", tmp_path / "gl", state_room=10 ** 9)
    assert (kept.state_parts, kept.state_dropped) == (2, 0)
    assert len(list((tmp_path / "gl" / "state").glob("*.tar.gz"))) == 2
    size = sum(p.stat().st_size for p in out1.glob("lease-work-*"))
    dropped = merge(out1, tmp_path / "results", tmp_path / "gl", state_room=size - 1)
    assert (dropped.state_parts, dropped.state_dropped) == (0, 1)
    assert not list((tmp_path / "gl" / "state").glob("*.tar.gz"))


def test_a_work_folder_packs_to_the_same_bytes_at_any_time(tmp_path, monkeypatch):
    """The returned checkpoint archives are compared byte for byte after re-joining: the gzip header must not carry
    the packing time (it did, and the comparison failed whenever two packs straddled a second)."""
    import gzip

    from gpu_kit.bundle import _tar_gz

    folder = tmp_path / "work" / "cell"
    folder.mkdir(parents=True)
    (folder / "checkpoint.pt").write_bytes(b"\x00\x01" * 100)
    clock = iter([1_000_000.0, 2_000_000.0])
    monkeypatch.setattr(gzip.time, "time", lambda: next(clock))
    assert _tar_gz(tmp_path, folder) == _tar_gz(tmp_path, folder)
