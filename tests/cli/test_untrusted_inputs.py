"""Untrusted inputs are data, never code (issue 51): checkpoints, a spec's ``runner:``, the Frey Face pickle and the
size of YAML, through the command line where a user meets them.

Every hostile input carries a payload that would write a marker file (or print the Zen of Python: ``import this``)
if fyexp executed it; each case asserts the marker is absent, the exit status, one error line naming the file and
no traceback.  The cases of :data:`CLI_CASES` are a table by class, counted in the issue's note.  ``import this``
runs the installed ``fyexp`` script (a fresh process: in this one ``this`` may be imported already, and printing
nothing would prove nothing); the other commands call its entry point in this process
(:func:`tests.in_process.run_here`: the same exit status and output, without importing torch again per case).
"""

from __future__ import annotations

import io
import pickle
import random
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from fyexp.spec import specs
from fyexp.data import freyface
from fyexp.core.errors import DataError
from fyexp.store.results import Cell, ResultStore
from fyexp.train import CHECKPOINT, TrainConfig, Trainer, TrainTask, rng_state, set_rng_state
from fyexp.train._state import load_checkpoint, read_checkpoint, rng_from_data, rng_to_data
from tests.conftest import ROOT, run_cli
from tests.in_process import run_here

ZEN = "Beautiful is better than ugly"   # what `import this` prints


class Payload:
    """Unpickling it calls ``exec``: the marker file appears if anything unpickles it with the full pickle."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return exec, (f"open({str(self.marker)!r}, 'w').write('code ran')",)


def one_error_line(stderr: str) -> str:
    """The last line of ``stderr``, after checking that it is the only ``error:`` line and there is no traceback."""
    assert "Traceback" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, stderr
    return errors[0]


# ---- checkpoints ------------------------------------------------------------------------------------------------
class DrawingTask(TrainTask):
    """A linear regression whose loss adds noise from python's, numpy's and torch's global generators, so a
    resume that restores any of the three states wrongly changes the losses."""

    def __init__(self):
        torch.manual_seed(0)
        self.model = nn.Linear(3, 1)

    def loss(self, batch):
        x, y = batch
        noise = random.random() + float(np.random.rand()) + torch.rand(()).item()
        loss = (self.model(x).squeeze(-1) - y).pow(2).mean() * (1.0 + 0.01 * noise)
        return loss, {}


def _data():
    generator = torch.Generator().manual_seed(1)
    return torch.randn(24, 3, generator=generator), torch.randn(24, generator=generator)


class Interrupt(Exception):
    """Raised after the checkpoint of an epoch, as Ctrl-C or a session's end would stop a run there."""


def _fit(epochs: int, work_dir: Path | None, stop_at: int | None = None):
    from fyexp.train import seed_everything

    seed_everything(7)   # before the model is built, as an experiment does
    task = DrawingTask()
    if stop_at is not None:
        def on_epoch_end(epoch, metrics):
            if epoch == stop_at:
                raise Interrupt
            return False

        task.on_epoch_end = on_epoch_end
    config = TrainConfig(epochs=epochs, batch_size=8, seed=7)
    history = Trainer(config, work_dir=work_dir, label="t").fit(task, _data())
    return [row["train_loss"] for row in history], task, (random.random(), float(np.random.rand()),
                                                          torch.rand(()).item())


def test_a_checkpoint_holds_only_data_and_resumes_bit_for_bit(tmp_path):
    full, full_task, full_after = _fit(4, None)
    with pytest.raises(Interrupt):
        _fit(4, tmp_path, stop_at=2)
    state = torch.load(tmp_path / CHECKPOINT, weights_only=True)     # PyTorch's restricted reader, no allow-list
    assert isinstance(state["rng"]["numpy"]["key"], torch.Tensor) and state["rng"]["numpy"]["key"].shape == (624,)
    resumed, resumed_task, resumed_after = _fit(4, tmp_path)
    assert resumed == full and resumed_after == full_after         # every generator where the uninterrupted run left it
    for a, b in zip(full_task.model.state_dict().values(), resumed_task.model.state_dict().values()):
        assert torch.equal(a, b)


def test_rng_state_round_trips_through_data():
    random.seed(3), np.random.seed(4), torch.manual_seed(5)
    np.random.randn()                                             # a cached Gaussian: has_gauss = 1
    saved = rng_state()
    buffer = io.BytesIO()
    torch.save(rng_to_data(saved), buffer)
    expected = (random.random(), np.random.randn(), torch.rand(3))
    random.seed(0), np.random.seed(0), torch.manual_seed(0)
    set_rng_state(rng_from_data(torch.load(io.BytesIO(buffer.getvalue()), weights_only=True)))
    got = (random.random(), np.random.randn(), torch.rand(3))
    assert got[:2] == expected[:2] and torch.equal(got[2], expected[2])


def test_a_checkpoint_of_the_format_before_still_resumes(tmp_path):
    """Written before numpy's state became a tensor: numpy's tuple pickled as an ndarray, allowed for legacy files."""
    task = DrawingTask()
    optimizers = {"main": torch.optim.SGD(task.model.parameters(), lr=0.1)}
    np.random.seed(11)
    legacy = {"epoch": 1, "done": False, "model": task.model.state_dict(),
              "optimizers": {k: o.state_dict() for k, o in optimizers.items()}, "rng": rng_state(),
              "shuffle_rng": torch.Generator().manual_seed(0).get_state(), "history": [{"epoch": 1}], "extra": {}}
    expected = np.random.rand(3)
    torch.save(legacy, tmp_path / CHECKPOINT)
    np.random.seed(0)
    state = load_checkpoint(tmp_path, "cpu", task, optimizers, torch.Generator())
    set_rng_state(state["rng"])
    assert np.array_equal(np.random.rand(3), expected)


def test_a_crafted_checkpoint_is_refused_and_training_starts_afresh(tmp_path, capsys):
    marker = tmp_path / "marker"
    fresh, _, _ = _fit(2, None)
    work = tmp_path / "work"
    work.mkdir()
    torch.save({"epoch": 1, "done": False, "model": Payload(marker)}, work / CHECKPOINT)
    again, _, _ = _fit(2, work)
    assert not marker.exists()
    assert again == fresh                                           # trained from scratch, as a fresh run
    err = capsys.readouterr().err
    assert f"warning: refused checkpoint {work / CHECKPOINT} (it holds the global exec" in err
    assert torch.load(work / CHECKPOINT, weights_only=True)["done"]  # replaced by the new run's own


@pytest.mark.parametrize("content, problem", [
    (b"\x80\x02garbage", "damaged checkpoint"),
    (b"PK\x03\x04 cut short", "damaged checkpoint"),
])
def test_a_damaged_checkpoint_is_one_warning_and_none(tmp_path, capsys, content, problem):
    (tmp_path / CHECKPOINT).write_bytes(content)
    assert read_checkpoint(tmp_path / CHECKPOINT) is None
    assert f"warning: {problem} {tmp_path / CHECKPOINT} (" in capsys.readouterr().err


def test_a_tensor_file_that_is_not_a_checkpoint_is_refused(tmp_path, capsys):
    torch.save({"epoch": 3, "model": {}}, tmp_path / CHECKPOINT)      # data, but not this format: no KeyError later
    assert read_checkpoint(tmp_path / CHECKPOINT) is None
    assert "not a fyexp checkpoint: expected the keys ['epoch', 'done'" in capsys.readouterr().err


@pytest.mark.slow
def test_run_force_over_a_crafted_checkpoint_runs_nothing_of_it(toy_env, tmp_path):
    results = Path(toy_env["FYEXP_RESULTS_DIR"])
    first = run_here("run", "toy", "--profile", "quick", "--no-progress", env=toy_env)
    assert first.returncode == 0, first.stderr
    work = ResultStore(results, "toy").work_dir("quick", Cell("toy", 0, {"x": 0.5}))
    work.mkdir(parents=True, exist_ok=True)
    marker = tmp_path / "marker"
    torch.save({"epoch": 1, "done": False, "payload": Payload(marker)}, work / CHECKPOINT)
    forced = run_here("run", "toy", "--profile", "quick", "--force", "--no-progress", env=toy_env)
    assert forced.returncode == 0 and "Traceback" not in forced.stderr, forced.stderr
    assert not marker.exists()
    assert f"warning: refused checkpoint {work / CHECKPOINT}" in " ".join(forced.stderr.split())


# ---- the registry of runners ------------------------------------------------------------------------------------
def test_the_table_of_runners_is_the_modules_that_register_one():
    from fyexp.experiments import RUNNERS

    registering = sorted(p.stem for p in (ROOT / "fyexp" / "experiments").glob("*.py")
                         if re.search(r"^@register$", p.read_text(encoding="utf-8"), re.M))
    assert list(RUNNERS) == registering
    folder = ROOT / "experiments"
    shipped = {specs.load_spec(name, folder).runner for name in specs.available_specs(folder)}
    assert shipped <= set(RUNNERS)


def test_a_runner_outside_the_table_is_refused_before_any_import(monkeypatch):
    from fyexp.core.errors import SpecError
    from fyexp.experiments import check_runner, get_experiment

    monkeypatch.delenv("FYEXP_RUNNERS", raising=False)
    for runner in ("this", "tests.toy_experiment", "fyexp.experiments.base", "base", "gmm_clustering_config"):
        with pytest.raises(SpecError, match=rf"^spec: key 'runner': expected one of the registered runners "
                                            rf"frac_vae, .*, got '{re.escape(runner)}'$"):
            get_experiment(runner)
    assert check_runner("gmm_clustering") == "gmm_clustering"
    monkeypatch.setenv("FYEXP_RUNNERS", " tests.toy_experiment , ")   # the user's own runner, named by the user
    assert get_experiment("tests.toy_experiment").name == "toy"
    with pytest.raises(SpecError):
        check_runner("tests.toy_broken")


# ---- the Frey Face pickle ---------------------------------------------------------------------------------------
def test_the_public_frey_face_file_loads_as_with_pickle():
    path = Path("/nonexistent") if not (data := _data_root()) else data / freyface.FILE
    if not path.is_file():
        pytest.skip("the Frey Face file is not in FYEXP_DATA_DIR")
    with open(path, "rb") as handle:
        expected = pickle.load(handle, encoding="latin1")[0]
    loaded = freyface.load_freyface.__wrapped__(str(data))
    assert torch.equal(loaded, torch.tensor(expected, dtype=torch.float32) / 255.0)


def _data_root() -> Path | None:
    import os

    return Path(os.environ["FYEXP_DATA_DIR"]) if os.environ.get("FYEXP_DATA_DIR") else None


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_array_pickles_of_every_protocol_load_and_a_payload_does_not(tmp_path, protocol):
    images = np.arange(2 * 560, dtype=np.uint8).reshape(2, 560)
    (tmp_path / freyface.FILE).parent.mkdir(parents=True)
    (tmp_path / freyface.FILE).write_bytes(pickle.dumps([images], protocol=protocol))
    assert torch.equal(freyface.load_freyface.__wrapped__(str(tmp_path)), torch.tensor(images) / 255.0)
    marker = tmp_path / "marker"
    (tmp_path / freyface.FILE).write_bytes(pickle.dumps([images, Payload(marker)], protocol=protocol))
    with pytest.raises(DataError, match=r"freyfaces\.pkl: refused: the pickle names the global "
                                          r"(builtins|__builtin__)\.exec"):
        freyface.load_freyface.__wrapped__(str(tmp_path))
    assert not marker.exists()


# ---- YAML bounds ------------------------------------------------------------------------------------------------
def test_yaml_bounds_on_both_sides_of_each_limit(monkeypatch):
    monkeypatch.setattr(specs, "MAX_YAML_DEPTH", 5)
    monkeypatch.setattr(specs, "MAX_YAML_NODES", 50)
    assert specs.yaml_bound_problem("[" * 5 + "]" * 5) is None
    assert specs.yaml_bound_problem("[" * 6 + "]" * 6) == "nested deeper than 5 levels"
    assert specs.yaml_bound_problem("{a: {b: {c: {d: {e: 1}}}}}") is None
    assert specs.yaml_bound_problem("{a: {b: {c: {d: {e: {f: 1}}}}}}") == "nested deeper than 5 levels"
    # a: 1 collection + 6 values = 7; b: 1 + 6 × 7 = 43; the whole list: 1 + 7 + 43 = 51 nodes expanded
    six = "[" + ", ".join(["1"] * 6) + "]"
    assert specs.yaml_bound_problem(f"[&a {six}]") is None                       # 1 + 7
    assert specs.yaml_bound_problem(f"[&a {six}, &b [{', '.join(['*a'] * 6)}]]") == \
        "more than 50 values once its aliases are expanded"
    assert specs.yaml_bound_problem(f"[&a {six}, [{', '.join(['*a'] * 5)}]]") is None   # 1 + 7 + 36 = 44
    assert "contains it" in specs.yaml_bound_problem("&a [*a]")
    assert specs.yaml_bound_problem("[unclosed") is None                         # left to the loader's own error


def _bomb(levels: int = 9) -> str:
    lines = ["&a0 [" + ", ".join(["1"] * 9) + "]"]
    lines += [f"&a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "[" + ", ".join(lines) + "]"


# ---- the bad-input set, through the installed script -------------------------------------------------------------
SPEC = "name: {name}\ntitle: t\nrunner: {runner}\nprofiles: {{quick: {{n_iter: {n_iter}}}}}\n"
KNOWN = "expected one of the registered runners frac_vae, fy_vae, gmm_calibration, gmm_clustering, nvdm"


def _downloaded_folder(tmp_path: Path) -> Path:
    """A folder as a colleague might share it: specs under experiments/, a module beside them with a payload."""
    folder = tmp_path / "downloaded"
    (folder / "experiments").mkdir(parents=True)
    (folder / "nextdoor.py").write_text(f"open({str(tmp_path / 'marker')!r}, 'w').write('code ran')\n")
    specs_by_name = {
        "zen": SPEC.format(name="zen", runner="this", n_iter=3),
        "dotted": SPEC.format(name="dotted", runner="this.x", n_iter=3),
        "path": SPEC.format(name="path", runner="../../etc/passwd", n_iter=3),
        "nextdoor": SPEC.format(name="nextdoor", runner="nextdoor", n_iter=3),
        "deep": SPEC.format(name="deep", runner="gmm_clustering", n_iter="[" * 200_000),
        "bomb": SPEC.format(name="bomb", runner="gmm_clustering", n_iter=_bomb()),
        "huge": SPEC.format(name="huge", runner="gmm_clustering", n_iter=3) + "#" * (specs.MAX_SPEC_BYTES + 1),
    }
    for name, text in specs_by_name.items():
        (folder / "experiments" / f"{name}.yaml").write_text(text)
    return folder


# (class, name, command, the file the error names or None, what the line says)
CLI_CASES = [
    ("runner", "import this", ["show", "zen"], "zen.yaml", KNOWN),
    ("runner", "dotted module", ["show", "dotted"], "dotted.yaml", "got 'this.x'"),
    ("runner", "dotted module, run", ["run", "dotted", "-p", "quick", "--dry-run"], "dotted.yaml", KNOWN),
    ("runner", "a path", ["show", "path"], "path.yaml", "got '../../etc/passwd'"),
    ("runner", "a path, run", ["run", "path", "-p", "quick", "--dry-run"], "path.yaml", KNOWN),
    ("runner", "module beside experiments/", ["show", "nextdoor"], "nextdoor.yaml", "got 'nextdoor'"),
    ("runner", "module beside experiments/, run", ["run", "nextdoor", "-p", "quick", "--dry-run"], "nextdoor.yaml",
     KNOWN),
    ("all", "list over them", ["list"], ".yaml", "error: "),
    ("yaml", "200,000 nested [", ["show", "deep"], "deep.yaml", "nested deeper than 32 levels"),
    ("yaml", "alias bomb in a spec", ["run", "bomb", "-p", "quick", "--dry-run"], "bomb.yaml",
     "more than 100,000 values once its aliases are expanded"),
    ("yaml", "spec over 1 MiB", ["show", "huge"], "huge.yaml", "expected at most 1,048,576"),
    ("yaml", "alias bomb in --set", ["run", "gmm-clustering", "-p", "quick", "--dry-run", "--set",
                                     f"n_iter={_bomb()}"], None,
     "--set n_iter: not read: its YAML is more than 100,000 values"),
    ("yaml", "recursive alias in --set", ["run", "gmm-clustering", "-p", "quick", "--dry-run", "--set",
                                          "n_iter=&a [*a]"], None, "refers to a collection that contains it"),
    ("yaml", "deep --set", ["run", "gmm-clustering", "-p", "quick", "--dry-run", "--set",
                            "n_iter=" + "[" * 40 + "]" * 40], None, "nested deeper than 32 levels"),
    ("yaml", "long --set", ["run", "gmm-clustering", "-p", "quick", "--dry-run", "--set",
                            "n_iter=" + "1" * (specs.MAX_SET_CHARS + 1)], None, "expected at most 16,384"),
]


@pytest.mark.parametrize("kind, name, command, file, says", CLI_CASES, ids=[f"{c[0]}: {c[1]}" for c in CLI_CASES])
def test_bad_inputs_give_one_line_and_run_no_code(tmp_path, kind, name, command, file, says):
    folder = _downloaded_folder(tmp_path)
    env = {"FYEXP_RESULTS_DIR": str(tmp_path / "results")}
    if "gmm-clustering" not in command:
        env["FYEXP_EXPERIMENTS_DIR"] = str(folder / "experiments")
    if name == "import this":
        result = run_cli(*command, env=env, cwd=folder)
    else:
        result = run_here(*command, env=env, cwd=folder)
    assert result.returncode == 2, result.stderr
    line = one_error_line(result.stderr)
    assert says in line and len(result.stderr) < 2000, line
    if file is not None:
        assert re.search(rf"{re.escape(str(folder / 'experiments'))}/\S*{re.escape(file)}: ", line), line
    assert not (tmp_path / "marker").exists() and ZEN not in result.stdout + result.stderr


@pytest.mark.parametrize("command", [["list"], ["show", "toy"], ["run", "toy", "-p", "quick", "--dry-run"]])
def test_an_empty_experiments_dir_variable_is_an_error(tmp_path, command):
    result = run_here(*command, env={"FYEXP_EXPERIMENTS_DIR": "", "FYEXP_RESULTS_DIR": str(tmp_path)})
    assert result.returncode == 2
    assert one_error_line(result.stderr) == ("error: FYEXP_EXPERIMENTS_DIR is set but empty; expected the folder of "
                                             "spec files (or unset it to use ./experiments)")


@pytest.mark.slow
def test_a_crafted_frey_face_pickle_stops_the_run_with_one_line(tmp_path):
    marker = tmp_path / "marker"
    (tmp_path / "data" / freyface.FILE).parent.mkdir(parents=True)
    (tmp_path / "data" / freyface.FILE).write_bytes(pickle.dumps([Payload(marker)]))
    result = run_here("run", "vr-vae", "-p", "quick", "--no-progress", "--yes", "--data-dir",
                            str(tmp_path / "data"), "--results-dir", str(tmp_path / "results"))
    assert result.returncode == 2 and not marker.exists()
    line = one_error_line(result.stderr)
    assert line.startswith(f"error: {tmp_path / 'data' / freyface.FILE}: refused: the pickle names the global "
                           "builtins.exec, not only numpy arrays"), line
