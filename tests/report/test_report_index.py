"""`fyexp report` end to end on the toy experiment: the index opens with the coverage of every published table,
regeneration from the same CSVs is byte-identical, and failed seeds are stated."""

from __future__ import annotations

import pytest
from pathlib import Path

from fyexp.report import build_report
from fyexp.store.results import Cell, ResultStore

TOY_SPECS = Path(__file__).resolve().parents[1] / "specs"
PROV = {"git_commit": "unknown", "fyexp_version": "0", "device": "cpu", "wall_time_s": 0.5,
        "timestamp": "2026-01-01T00:00:00+00:00"}


def _results(root: Path) -> None:
    store = ResultStore(root, "toy")
    values = {"Standard EM": 0.606, "Hard EM": 0.40, "Sparse EM": 0.636}
    for seed in (0, 1):
        for row, value in values.items():
            cell = Cell("toy", seed, {"row": row})
            if row == "Sparse EM" and seed == 1:
                store.write_failure("paper", cell, "diverged", PROV)
                continue
            store.write_cell("paper", cell, [{"metric": "adjusted_mi", "value": value + 0.001 * seed, "paper": "fyvi",
                                              "table": "1", "setting": "synthetic GMM", "paper_row": row}], PROV)
    store.consolidate()


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.suffix in (".md", ".tex")}


@pytest.mark.slow
def test_report_is_byte_identical_and_complete(tmp_path):
    _results(tmp_path)
    build_report(None, tmp_path, TOY_SPECS)
    first = _snapshot(tmp_path)
    build_report(None, tmp_path, TOY_SPECS)
    assert _snapshot(tmp_path) == first
    index = first["README.md"].decode()
    assert index.index("## Coverage of the published tables") < index.index("## Provenance")
    assert "1075 published cells" in index
    assert "2026-01-01" not in index and "2026-01-01" not in first["toy/tables/fyvi-table1-paper.md"].decode()
    assert "| fyvi | Table 1 | 9 | 3 | 3 |" in index  # three rows of adjusted_mi ran, six cells did not
    assert "partly reproduced" in index and "not implemented" in index
    table = first["toy/tables/fyvi-table1-paper.md"].decode()
    assert "1 of 2 (1 failed)" in table and "fewer seeds than planned" in table
    assert "— not run" in table and "✗" in table  # Hard EM is off by far more than the spreads


def test_index_opens_with_the_claims_and_writes_each_papers_table(tmp_path):
    from fyexp.spec.specs import experiments_dir

    build_report(["gmm-clustering"], tmp_path / "empty", experiments_dir())  # fyexp's own experiments, no rows
    index = (tmp_path / "empty" / "README.md").read_text()
    assert index.index("## Claims of each paper") < index.index("## Coverage of the published tables")
    assert "| `vr` |" in index and "[md](claims/vr.md)" in index
    assert "not run" in (tmp_path / "empty" / "claims" / "fyvi.md").read_text()
    assert (tmp_path / "empty" / "claims" / "frac.tex").read_text().startswith("\\begin{tabular}")


def test_a_folder_of_ones_own_experiments_gets_no_claims_section(tmp_path):
    _results(tmp_path)
    build_report(None, tmp_path, TOY_SPECS)  # the toy experiments write no claimed row: no section, no error
    assert "## Claims of each paper" not in (tmp_path / "README.md").read_text()
    assert not (tmp_path / "claims").exists()
