"""``fyexp claims`` reads its answer from the user cache when nothing it is derived from changed
(``fyexp/cli/commands/claims.py``, ``fyexp/run/derivation.py``): the same answer, the judging's warnings said again, and
a
changed result file, claims file or spec judged afresh."""

from __future__ import annotations

import io
import os
import shutil
import sys

import pytest
from rich.console import Console

import fyexp.cli.commands.claims as command
from fyexp.run.derivation import derivation_inputs
from tests.conftest import ROOT, run_cli


@pytest.fixture
def counted(monkeypatch):
    """The command with a stand-in judge: counts its calls, warns once on stderr, answers with the call number."""
    calls = []

    def judge(paper, profile, json_out, results_dir, experiments_dir, width, long, all_profiles):
        calls.append(width)
        print(f"warning: damaged file {results_dir}/x.csv (judged {len(calls)})", file=sys.stderr)
        return f"answer {len(calls)}" if json_out else [(f"line {len(calls)} at {width}", None)]

    monkeypatch.setattr(command, "_answer", judge)
    return calls


def _run(results, json_out=True, width=None):
    out = io.StringIO()
    console = Console(file=out, width=width or 80, force_terminal=width is not None, color_system=None)
    command.claims_command(None, None, json_out, results, None, console)
    return out.getvalue()


def test_asked_again_unchanged_the_answer_and_its_warnings_come_from_the_cache(tmp_path, counted, capsys):
    (tmp_path / "toy").mkdir()
    (tmp_path / "toy" / "results.csv").write_text("a\n1\n")
    first = _run(tmp_path)
    said_first = capsys.readouterr()
    again = _run(tmp_path)
    said_again = capsys.readouterr()
    assert counted == [100] and first == again == ""            # judged once; JSON goes to stdout (print)
    assert said_first.out == said_again.out == "answer 1\n"
    assert said_first.err == said_again.err == f"warning: damaged file {tmp_path}/x.csv (judged 1)\n"


def test_a_changed_result_file_a_new_one_or_another_width_is_judged_afresh(tmp_path, counted, capsys):
    rows = tmp_path / "toy" / "results.csv"
    rows.parent.mkdir()
    rows.write_text("a\n1\n")
    _run(tmp_path)
    rows.write_text("a\n12\n")                                 # other size and time
    _run(tmp_path)
    (tmp_path / "toy" / "cells").mkdir()
    (tmp_path / "toy" / "cells" / "new.csv").write_text("a\n")
    _run(tmp_path)
    assert len(counted) == 3
    table = _run(tmp_path, json_out=False, width=90)            # the table: at its width, never the JSON's answer
    assert counted[-1] == 90 and "line 4 at 90" in table
    assert "line 4 at 90" in _run(tmp_path, json_out=False, width=90) and len(counted) == 4
    _run(tmp_path, json_out=False, width=120)
    assert counted[-1] == 120 and len(counted) == 5
    capsys.readouterr()


def test_the_key_follows_the_code_the_specs_and_the_results_but_not_their_reading(tmp_path):
    specs = tmp_path / "specs"
    shutil.copytree(ROOT / "experiments", specs)
    results = tmp_path / "results"
    (results / "toy").mkdir(parents=True)
    key = derivation_inputs([results], specs)
    assert key == derivation_inputs([results], specs)          # reading changes nothing
    (specs / "tvem-bsc.yaml").write_text((specs / "tvem-bsc.yaml").read_text() + "\n# another spec text\n")
    assert derivation_inputs([results], specs) != key
    key = derivation_inputs([results], specs)
    target = results / "toy" / "results.csv"
    target.write_text("a\n")
    os.utime(target, ns=(1, 1))
    assert derivation_inputs([results], specs) != key


def test_a_spec_whose_runner_is_outside_fyexp_is_never_cached(tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "mine.yaml").write_text("name: mine\nrunner: my_lab.runner\n")
    assert derivation_inputs([tmp_path], specs) is None


@pytest.mark.slow
def test_the_installed_script_answers_the_same_twice_and_names_a_damaged_file_both_times(tmp_path):
    results = tmp_path / "results"
    shutil.copytree(ROOT / "results" / "tvem-bsc", results / "tvem-bsc", ignore=shutil.ignore_patterns("work"))
    cell = next((results / "tvem-bsc" / "cells").glob("*/*.record.json"))
    cell.write_text("{not json")                                  # a damaged record: one warning naming it
    env = {"FYEXP_RESULTS_DIR": str(results)}
    first = run_cli("claims", "tvem", "--json", env=env)
    again = run_cli("claims", "tvem", "--json", env=env)
    assert first.returncode == again.returncode == 0, first.stderr
    assert first.stdout == again.stdout and '"verdict"' in first.stdout
    warned = [line for line in first.stderr.splitlines() if str(cell) in line]
    assert len(warned) == 1 and warned[0].startswith("warning:")
    assert [line for line in again.stderr.splitlines() if str(cell) in line] == warned
