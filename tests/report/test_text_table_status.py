"""VR Table 4 (architectures the model builders state) is read from the code, reproduced by no run: the index says
so and counts it among no reproduced table and in no total of results (issue 49, "a table reproduced by nothing"),
in a fresh results folder and beside committed rows; through the installed ``fyexp`` script."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fyexp.report.coverage import CoverageLine, coverage_markdown, totals_line
from tests.conftest import run_cli

ROOT = Path(__file__).resolve().parents[2]
LABEL = "architectures read from the code, not run (12 of 12 cells as printed)"


def _coverage_rows(index: str) -> list[str]:
    """The coverage table's rows and its two summary lines (totals, tables by status) of an index."""
    part = index.split("## Coverage of the published tables", 1)[1].split("**How to read a status.**", 1)[0]
    return [line for line in part.splitlines() if line.startswith(("| ", "**Totals", "Tables by status"))]


def _report(results: Path, *names: str) -> str:
    proc = run_cli("report", *names, env={"FYEXP_RESULTS_DIR": str(results)})
    assert proc.returncode == 0, proc.stderr
    return (results / "README.md").read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_fresh_results_folder_calls_no_table_reproduced(tmp_path):
    index = _report(tmp_path)
    rows = _coverage_rows(index)
    assert not [line for line in rows if "reproduced" in line]          # nothing ran: nothing is reproduced
    table4 = [line for line in rows if line.startswith("| vr | Table 4 |")]
    assert len(table4) == 1 and LABEL in table4[0] and "— (not run)" in table4[0]
    totals = next(line for line in rows if line.startswith("**Totals"))
    assert "0 with a `paper`-profile result, 0 with a result at some profile, 0 within tolerance" in totals
    assert "12 cells of vr Table 4 are architectures read from the code, not run" in totals
    status = next(line for line in rows if line.startswith("Tables by status"))
    assert status.endswith("architectures read from the code, not run 1.") and "reproduced" not in status


@pytest.mark.slow
def test_beside_committed_rows_the_label_says_what_the_table_is(tmp_path):
    """vr-vae's committed rows (a slice of results/vr-vae/results.csv, so that the figures are quick to draw)."""
    lines = (ROOT / "results" / "vr-vae" / "results.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / "vr-vae").mkdir()
    (tmp_path / "vr-vae" / "results.csv").write_text("".join(lines[:6]), encoding="utf-8")
    proc = run_cli("report", "vr-vae", env={"FYEXP_RESULTS_DIR": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    assert f"vr-vae: vr Table 4 [code] {LABEL} →" in proc.stdout
    index = (tmp_path / "README.md").read_text(encoding="utf-8")
    assert re.search(rf"\| vr Table 4 \| `code` \| {re.escape(LABEL)} \| ✓ exact 12 of 12", index)
    rows = _coverage_rows(index)
    assert [line for line in rows if line.startswith("| vr | Table 4 |") and LABEL in line]
    assert not [line for line in rows if line.startswith("| vr | Table 4 |") and "reproduced" in line]
    assert f"status: **{LABEL}**" in (tmp_path / "vr-vae" / "tables" / "vr-table4-code.md").read_text()


def _line(**fields) -> CoverageLine:
    base = dict(paper="fyvi", part="fyvi Table 1", published=9, numeric=9, reference=0, at_paper=9, at_any=9,
                within=9, exact=9, by_convention=0, status="reproduced", experiments=("clustering",))
    return CoverageLine(**{**base, **fields})


def test_a_table_read_from_the_code_is_rendered_as_such_and_counted_in_no_total():
    run = _line()
    code = _line(paper="vr", part="vr Table 4", published=12, numeric=0, at_paper=0, at_any=0, within=0, exact=0,
                 from_code=12, from_code_as_printed=11, experiments=("vr-vae",),
                 status="architectures read from the code, not run (11 of 12 cells as printed)")
    text = coverage_markdown([run, code])
    assert text[3] == ("| vr | Table 4 | 12 (12 architectures read from the code) | — (not run) | — (not run) | "
                       "— (11 of 12 as printed, read from the code) | architectures read from the code, not run "
                       "(11 of 12 cells as printed) | `vr-vae` |")
    totals = totals_line([run, code])
    assert "9 of them results to reproduce" in totals and "9 within tolerance" in totals  # the 12 add nothing
    assert totals.endswith("; 12 cells of vr Table 4 are architectures read from the code, not run (11 of them as "
                           "printed), counted in none of these.")
    assert "read from the code" not in totals_line([run])
    assert text[6] == "Tables by status (each published table once): reproduced 1, architectures read from the " \
                      "code, not run 1."
