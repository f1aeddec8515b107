"""`fyexp claims`, `fyexp reproduce --dry-run` and the report's claims, through the command line: a closed pipe and
a claim's word where a number is declared through the installed script (a real process, what a user runs); the other
commands through its entry point in this process (:mod:`tests.in_process`: the same exit status and output, without
importing torch again per case)."""

from __future__ import annotations

from dataclasses import replace

import json

import pytest

from fyexp.run.cell_filter import parse_only
from fyexp.cli.app import main
from fyexp.cli.reproduce import describe, plan
from tests.conftest import ROOT, TOY_SPECS, run_cli
from tests.in_process import run_here

SPEED = " from recorded times, those of the project's machine × 1 for this machine's speed ($FYEXP_MACHINE_SPEED)"

def _record(root, seeds=(0,), values=(1.0,), profile="paper"):
    """Finished toy cells, 30 s each, with the run record a run on this CPU writes (a cell without one has unknown
    provenance: not finished); their cell files only (no results.csv)."""
    from tests.run.test_plan import _record as finished_cells

    finished_cells(root, 30.0, values, seeds, profile, finished=True)
    (root / "toy" / "results.csv").unlink()


def test_dry_run_counts_cells_and_estimates_from_recorded_times(tmp_path):
    _record(tmp_path)  # one of the paper profile's four cells (values 1, 2 × seeds 0, 1), 30 s
    line, = plan("fyvi", "paper", tmp_path, TOY_SPECS)
    assert (line.cells, line.finished, line.to_run, line.estimate_s) == (4, 1, 3, 90.0)
    # the x = 2 cells are estimated from the x = 1 cell's time: counted and the setting named
    assert line.extrapolated == "2 of them at another x than any recorded cell"
    assert describe("fyvi", "paper", [line]).splitlines()[1] == (
        "  toy: 4 cells, 1 finished, 3 to run, estimate 90 s (30 s per cell); 2 of them at another x than any "
        "recorded cell")
    line, = plan("fyvi", "paper", tmp_path, TOY_SPECS, parse_only(["x=2"]))
    assert (line.cells, line.to_run) == (2, 2)
    line, = plan("fyvi", "paper", tmp_path, TOY_SPECS, parse_only(["x=1"]))
    assert (line.to_run, line.extrapolated) == (1, "")  # seed 1 of x = 1: a recorded cell at its settings
    line, = plan("fyvi", "quick", tmp_path, TOY_SPECS)  # nothing recorded at that profile
    assert line.estimate_s is None and "estimate unknown" in describe("fyvi", "quick", [line])


def test_dry_run_gives_the_known_part_of_an_estimate_and_counts_the_rest():
    """As ``fyexp run``'s plan: 14 of 54 cells on data without a recorded cell are counted apart, not hidden in an
    "unknown" for the whole experiment, and the total says that some cells have no estimate."""
    from fyexp.cli.reproduce import PlanLine, total_line

    partial = PlanLine("vr-vae", 60, 6, 54, 23.6 * 3600, unestimated=14)
    known = PlanLine("fy-vae", 60, 57, 3, 2040.0)
    text = describe("vr", "paper", [partial, known])
    assert "vr-vae: 60 cells, 6 finished, 54 to run, estimate 23.6 h for 40 of them, unknown for 14\n" in text
    assert "fy-vae: 60 cells, 57 finished, 3 to run, estimate 34 min (11 min per cell)" in text
    assert total_line("total", [partial, known]) == ("  total: 120 cells, 57 to run, estimate 24.2 h (+ cells without "
                                                     "recorded times)"
                                                     + SPEED)
    assert total_line("total", [known]) == "  total: 60 cells, 3 to run, estimate 34 min" + SPEED
    unknown, done = PlanLine("vr-bnn", 7, 6, 1, None), PlanLine("tvem-bsc", 81, 81, 0, None)
    assert total_line("total", [unknown, done]) == "  total: 88 cells, 1 to run, estimate unknown (no recorded times)"
    assert total_line("total", [done]) == "  total: 81 cells, 0 to run, estimate 0 s" + SPEED
    scaled = PlanLine("frac-vae", 528, 0, 528, None, unestimated=528, scaled="about …", scaled_s=7200.0,
                      scaled_cells=528)
    also = PlanLine("vr-vae", 60, 46, 14, None, unestimated=14, scaled="about …", scaled_s=3600.0, scaled_cells=13)
    assert total_line("total", [unknown, scaled, also]) == (
        "  total: 595 cells, 543 to run, estimate unknown (no recorded times); about 3.0 h for 541 cells without one, "
        "scaled from other profiles (an extrapolation)")
    assert total_line("total", [known, scaled]).endswith(
        "this machine's speed ($FYEXP_MACHINE_SPEED); about 2.0 h for 528 cells without one, scaled from other profiles (an "
        "extrapolation)")
    assert total_line("total", [known, replace(scaled, to_run=0)]).endswith("($FYEXP_MACHINE_SPEED)")   # nothing to run
    assert "tvem-bsc: 81 cells, 81 finished, 0 to run, estimate 0 s\n" in describe("tvem", "paper", [done])
    assert "vr-bnn: 7 cells, 6 finished, 1 to run, estimate unknown\n" in describe("vr", "paper", [unknown])


@pytest.mark.slow
def test_installed_reproduce_dry_run(tmp_path, capsys):
    _record(tmp_path / "results")
    result = run_here("reproduce", "fyvi", "--dry-run", "--results-dir", str(tmp_path / "results"),
                     "--experiments-dir", str(TOY_SPECS))
    assert result.returncode == 0, result.stderr
    assert "toy: 4 cells, 1 finished, 3 to run, estimate 90 s" in result.stdout
    assert not (tmp_path / "results" / "toy" / "results.csv").exists()  # a dry run writes nothing
    with pytest.raises(SystemExit) as exit_:  # the script's entry point, in-process: one line, exit 2
        main(["reproduce", "nope", "--dry-run", "--experiments-dir", str(TOY_SPECS)])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1 and "unknown paper 'nope'" in err


def _lines(text: str) -> list[str]:
    return text.splitlines()


@pytest.mark.slow
def test_installed_claims_table_fits_100_columns_on_the_committed_results(capsys):
    before = {p: p.stat().st_mtime_ns for p in (ROOT / "results").rglob("results.csv")}
    table = run_here("claims", "tvem", "--results-dir", str(ROOT / "results"), env={"COLUMNS": "100"})
    assert table.returncode == 0, table.stderr
    lines = _lines(table.stdout)
    assert max(len(line) for line in lines) <= 100
    checks = lines.index("Our checks (not claims of the paper; never counted in its tally)")
    bars = next(i for i, line in enumerate(lines) if line.startswith("tvem-bars-recovered"))
    assert bars > checks and lines[bars].split()[1:5] == ["supported", "20", "paper", "85%"]  # a check: apart
    summary = next(line for line in lines if line.startswith("tvem: "))
    # the tally counts the paper's claims only: tvem's are checks of its theorems, counted apart with their verdicts
    assert summary.startswith("tvem: 0 claims; 5 theorem checks (5 supported; all at paper)")
    assert summary.endswith("; 3 checks of ours")
    main(["claims", "tvem", "--json", "--results-dir", str(ROOT / "results")])
    verdicts = json.loads(capsys.readouterr().out)
    ids = [v["id"] for v in verdicts if v["headline"]]
    assert len(ids) == len(set(ids)) == len({v["id"] for v in verdicts})  # one headline per claim
    bars = next(v for v in verdicts if v["id"] == "tvem-bars-recovered")
    assert bars["kind"] == "check" and bars["verdict"] == "supported" and bars["n"] == "20"
    assert bars["ours"] == "85% of runs [62%, 97%]" and bars["low"] is not None  # --json keeps the interval
    monotone = next(v for v in verdicts if v["id"] == "tvem-free-energy-monotone")
    assert monotone["kind"] == "theorem_check" and monotone["line"] == 78 and "monotonically increases" in monotone["quote"]
    assert before == {p: p.stat().st_mtime_ns for p in (ROOT / "results").rglob("results.csv")}


@pytest.mark.slow
def test_installed_claims_shows_other_profiles_only_when_asked():
    plain = run_here("claims", "vr", "--results-dir", str(ROOT / "results"))
    every = run_here("claims", "vr", "--all-profiles", "--results-dir", str(ROOT / "results"))
    assert plain.returncode == every.returncode == 0, plain.stderr + every.stderr
    assert "also at" not in plain.stdout and "also at" in every.stdout
    assert "paper-lr1e-4" in every.stdout and "paper-lr1e-4" not in plain.stdout  # a variant: never the headline
    heads = [line.split()[0] for line in _lines(plain.stdout) if line.startswith("vr-")]
    assert len(heads) == len(set(heads))


@pytest.mark.slow
def test_installed_claims_into_a_closed_pipe_ends_quietly():
    import subprocess

    from tests.conftest import cli_env, fyexp_script

    for extra, first in (("", "id "), ("--json", "[")):
        done = subprocess.run(["bash", "-c", f"set -o pipefail; '{fyexp_script()}' claims tvem {extra} "
                                             f"--results-dir '{ROOT / 'results'}' | head -n 1"],
                              capture_output=True, text=True, env=cli_env(), cwd=ROOT, timeout=600)
        assert done.returncode == 0 and done.stderr == "" and done.stdout.startswith(first), done


@pytest.mark.slow
@pytest.mark.parametrize("args, message", [
    (["--profile", "no-such-profile"], "--profile: unknown profile 'no-such-profile'; expected one of"),
    (["--results-dir", "{tmp}/absent"], "does not exist; expected the folder of result CSVs"),
])
def test_installed_claims_refuses_an_unknown_profile_or_results_folder(tmp_path, args, message):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    if "--results-dir" not in args:
        args += ["--results-dir", str(ROOT / "results")]
    done = run_here("claims", "tvem", *args)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and message in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("changes, message", [
    ({}, "than: expected either b or than (a constant in place of b), not both, got 0.75"),
    # a word where a number is declared: was float()'s ValueError, exit 1 ("unexpected ValueError")
    ({"than": None, "magnitude": "large"}, "magnitude: expected a number or null, got 'large'"),
    ({"than": None, "paper": "fyvx"}, "paper: expected one of fyvi, fyvl, vr, tvem, frac, got 'fyvx'"),
])
def test_installed_claims_refuses_a_bad_claim_in_one_line(tmp_path, monkeypatch, changes, message):
    """A claim with a side b and a constant ``than`` (it was judged against b, ``than`` silently ignored), a key
    outside its declared type or domain (:mod:`fyexp.claims.keys`): one line naming the file, the claim and the
    key, exit 2.  The installed script reads the claims file named here (a ``sitecustomize`` on its PYTHONPATH
    points :data:`fyexp.claims.model.CLAIMS_FILE` at it) for the word where a number is declared; the other cases
    in this process, :data:`~fyexp.claims.model.CLAIMS_FILE` patched alike."""
    import os

    import yaml

    claim = {"id": "toy-bad", "paper": "fyvi", "where": "Table 9", "line": 3, "quote": "toy", "claim": "toy",
             "direction": "less", "than": 0.75, "rows": {"experiment": "gmm-clustering", "metric": "adjusted_mi"},
             "a": {"method": "sparse"}, "b": {"method": "standard"}} | changes
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump({"claims": [{k: v for k, v in claim.items() if v is not None}]}))
    if changes.get("magnitude") == "large":
        hook = tmp_path / "hook"
        hook.mkdir()
        (hook / "sitecustomize.py").write_text("import os\nfrom pathlib import Path\n\nimport fyexp.claims.model\n\n"
                                               "fyexp.claims.model.CLAIMS_FILE = "
                                               "Path(os.environ['TEST_CLAIMS_FILE'])\n")
        done = run_cli("claims", "--results-dir", str(tmp_path),
                       env={"PYTHONPATH": f"{hook}{os.pathsep}{ROOT}", "TEST_CLAIMS_FILE": str(path)})
    else:
        import fyexp.claims.model

        monkeypatch.setattr(fyexp.claims.model, "CLAIMS_FILE", path)
        done = run_here("claims", "--results-dir", str(tmp_path))
    assert done.returncode == 2 and done.stdout == "" and "Traceback" not in done.stderr, done
    assert done.stderr.count("\n") == 1 and f"{path}: claim 'toy-bad': {message}" in done.stderr


def test_reproduce_runs_every_cell_with_the_set_overrides_then_reports(tmp_path, monkeypatch):
    """A real (not dry) run: every parameter of `run` reaches it (called as a function, Typer's defaults would be
    OptionInfo objects), --set makes a variant profile, then report writes the index."""
    monkeypatch.setenv("FYEXP_DATA_DIR", str(tmp_path))
    results = tmp_path / "results"
    main(["reproduce", "fyvi", "--profile", "quick", "--set", "values=[3.0]", "--results-dir", str(results),
          "--experiments-dir", str(TOY_SPECS), "--device", "cpu"])  # returns (exit 0) or raises SystemExit
    cells = sorted(p.name for p in (results / "toy" / "cells").glob("*/*.csv"))
    assert cells == ["toy__x=3__seed=0.csv"] and (results / "toy" / "cells" / "quick+values=3.0").is_dir()
    assert (results / "README.md").is_file()
    line, = plan("fyvi", "quick", results, TOY_SPECS, sets=["values=[3.0]"])
    assert (line.cells, line.finished, line.to_run) == (1, 1, 0)
