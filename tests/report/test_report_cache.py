"""The report's output cache (:mod:`fyexp.report.cache`): a table or figure is drawn only when what it is drawn from
changed, its outputs stay byte-identical to a full regeneration, and ``report`` and ``claims`` read results without
writing them and without importing a runner or torch."""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import fyexp.report as report_module
from fyexp.report import build_report
from fyexp.report.cache import MANIFEST, Manifest
from fyexp.report.figures import FigureContext, _FIGURES, _registry, draw_figures
from fyexp.store.results import Cell, ResultStore
from tests.conftest import ROOT, cli_env, run_cli

TOY_SPEC = Path(__file__).resolve().parents[1] / "specs" / "toy.yaml"
PROV = {"git_commit": "unknown", "fyexp_version": "0", "device": "cpu", "wall_time_s": 0.5,
        "timestamp": "2026-01-01T00:00:00+00:00"}
RUNNERS = ("frac_vae", "fy_vae", "gmm_calibration", "gmm_clustering", "nvdm", "tvem_bsc", "vr_bnn",
           "vr_renyi_gaussians", "vr_vae")


def _specs(tmp_path: Path) -> Path:
    """The toy spec with a figure drawn from its rows only (FYVI Figure 2: sparse EM against ρ)."""
    folder = tmp_path / "specs"
    folder.mkdir()
    (folder / "toy.yaml").write_text(TOY_SPEC.read_text().replace("tables:", "plots: [fyvi-figure2]\ntables:"))
    return folder


def _write(results: Path, ami_at_rho2: float = 0.62) -> None:
    store = ResultStore(results, "toy")
    for seed in (0, 1):
        for rho in (1.0, 2.0):
            value = (0.60 if rho == 1.0 else ami_at_rho2) + 0.001 * seed
            store.write_cell("paper", Cell("sparse", seed, {"rho": rho}),
                             [{"metric": "adjusted_mi", "value": value, "rho": rho, "paper": "fyvi", "table": "1",
                               "setting": "synthetic GMM", "paper_row": "Sparse EM" if rho == 2.0 else "Standard EM"}],
                             PROV)


def _outputs(results: Path) -> dict[str, bytes]:
    return {p.relative_to(results).as_posix(): p.read_bytes() for p in sorted(results.rglob("*"))
            if p.is_file() and p.parent.name in ("tables", "figures")}


@pytest.fixture
def counted(monkeypatch):
    """How many times the report wrote a table and drew FYVI Figure 2."""
    counts = {"tables": 0, "figures": 0}
    write_table = report_module.write_table

    def table(*args, **kwargs):
        counts["tables"] += 1
        return write_table(*args, **kwargs)

    draw = _registry()["fyvi-figure2"]

    @functools.wraps(draw)
    def figure(*args, **kwargs):
        counts["figures"] += 1
        return draw(*args, **kwargs)

    monkeypatch.setattr(report_module, "write_table", table)
    monkeypatch.setitem(_FIGURES, "fyvi-figure2", figure)
    return counts


@pytest.mark.slow
def test_warm_report_draws_nothing_and_a_changed_row_redraws(tmp_path, counted):
    specs, results = _specs(tmp_path), tmp_path / "results"
    _write(results)
    build_report(None, results, specs)
    assert counted == {"tables": 1, "figures": 1}
    first, manifest = _outputs(results), (results / MANIFEST).read_text()
    assert "toy/figures/fyvi-figure2-paper.png" in first and "toy/tables/fyvi-table1-paper.md" in first

    build_report(None, results, specs)  # nothing changed: nothing drawn, nothing rewritten
    assert counted == {"tables": 1, "figures": 1}
    assert _outputs(results) == first and (results / MANIFEST).read_text() == manifest

    _write(results, ami_at_rho2=0.70)  # one row changed: its table and figure are drawn again
    build_report(None, results, specs)
    assert counted == {"tables": 2, "figures": 2}
    changed = _outputs(results)
    assert changed["toy/tables/fyvi-table1-paper.md"] != first["toy/tables/fyvi-table1-paper.md"]
    assert changed["toy/figures/fyvi-figure2-paper.png"] != first["toy/figures/fyvi-figure2-paper.png"]

    build_report(None, results, specs, cache=False)  # --no-cache: everything drawn, the same bytes
    assert counted == {"tables": 3, "figures": 3}
    assert _outputs(results) == changed


@pytest.mark.slow
def test_an_output_changed_or_gone_is_drawn_again_and_a_full_regeneration_is_byte_identical(tmp_path, counted):
    specs, results = _specs(tmp_path), tmp_path / "results"
    _write(results)
    build_report(None, results, specs)
    first, manifest = _outputs(results), (results / MANIFEST).read_bytes()
    (results / "toy" / "figures" / "fyvi-figure2-paper.png").write_bytes(b"edited by hand")
    (results / "toy" / "tables" / "fyvi-table1-paper.tex").unlink()
    build_report(None, results, specs)
    assert counted == {"tables": 2, "figures": 2}
    assert _outputs(results) == first
    (results / MANIFEST).unlink()  # no manifest: everything drawn, every byte as before, the same manifest
    build_report(None, results, specs)
    assert counted == {"tables": 3, "figures": 3}
    assert _outputs(results) == first and (results / MANIFEST).read_bytes() == manifest
    assert json.loads(manifest) == json.loads(json.dumps(json.loads(manifest), sort_keys=True))


@pytest.mark.parametrize("text", ["garbage{", "[]", json.dumps({"format": 1, "entries": {"x": {"key": 1}}}),
                                  json.dumps({"format": 1, "entries": {"x": {"key": "k", "files": {"/etc/passwd": "0"}}}})])
def test_a_damaged_manifest_is_one_warning_and_everything_is_drawn(tmp_path, counted, capsys, text):
    specs, results = _specs(tmp_path), tmp_path / "results"
    _write(results)
    results.mkdir(exist_ok=True)
    (results / MANIFEST).write_text(text)
    build_report(None, results, specs)
    warnings = [line for line in capsys.readouterr().err.splitlines() if MANIFEST in line]
    assert len(warnings) == 1 and "damaged report manifest" in warnings[0]
    assert counted == {"tables": 1, "figures": 1}
    assert json.loads((results / MANIFEST).read_text())["format"] == 1  # rewritten whole


def test_a_figure_is_drawn_again_when_another_experiment_it_read_changed(tmp_path, monkeypatch):
    """A figure that reads another experiment's rows (``ctx.load``) is keyed by them too."""
    calls = []

    def compare_two(ctx, **options):
        calls.append(1)
        other = ctx.load("other")
        path = ctx.figures_dir / "two.md"
        from fyexp.report.cache import write_text_if_changed

        return [write_text_if_changed(path, f"{len(ctx.frame)} {other['value'].sum()}\n")]

    compare_two.__module__ = "fyexp.report.figures.topics"
    monkeypatch.setitem(_FIGURES, "topic-coherence", compare_two)
    others = {"other": pd.DataFrame({"value": [1.0, 2.0]})}
    ctx = FigureContext("mine", pd.DataFrame({"value": [0.5]}), tmp_path / "mine", lambda name: others[name])
    plots = (("topic-coherence", {}),)
    for expected in (1, 1):
        manifest = Manifest(tmp_path)
        draw_figures(plots, ctx, manifest)
        manifest.save()
        assert len(calls) == expected
    others["other"] = pd.DataFrame({"value": [1.0, 3.0]})
    manifest = Manifest(tmp_path)
    draw_figures(plots, ctx, manifest)
    assert len(calls) == 2 and (tmp_path / "mine" / "figures" / "two.md").read_text() == "1 4.0\n"
    assert manifest.entries["figure:mine/topic-coherence"]["reads"] == ["other"]


def _copy_results(tmp_path: Path, names=("vr-renyi-gaussians",)) -> Path:
    """A small copy of the committed results (one experiment's rows, figures and tables)."""
    results = tmp_path / "results"
    for name in names:
        shutil.copytree(ROOT / "results" / name, results / name)
    return results


def _state(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.relative_to(folder).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_claims_writes_nothing_and_report_writes_only_its_outputs(tmp_path):
    results = _copy_results(tmp_path)
    before = _state(results)
    done = run_cli("claims", "vr", "--results-dir", str(results))
    assert done.returncode == 0, done.stderr
    assert _state(results) == before  # every file's bytes and time
    done = run_cli("report", "--results-dir", str(results))
    assert done.returncode == 0, done.stderr
    after = _state(results)
    changed = {p for p in after if before.get(p) != after[p]}
    outputs = ("README.md", MANIFEST, "claims/", "summaries.json", "vr-renyi-gaussians/figures/",
               "vr-renyi-gaussians/tables/")
    assert changed and all(p.startswith(outputs) for p in changed), sorted(changed)
    assert all(after[p] == before[p] for p in before if p.startswith("vr-renyi-gaussians/cells/"))


@pytest.mark.slow
def test_report_and_claims_import_no_runner_and_no_torch(tmp_path):
    """``claims``, and ``report`` once its manifest holds what it drew, import neither a runner nor torch: what they
    need of a spec comes from the spec and the cells' records (the runner's light ``<runner>_config`` module)."""
    results = _copy_results(tmp_path)
    first = run_cli("report", "--results-dir", str(results))  # draws: may import what it draws from
    assert first.returncode == 0, first.stderr
    code = f"""
import sys
from pathlib import Path
from fyexp.cli.app import main
results = {str(results)!r}
for args in (["claims", "--results-dir", results], ["report", "--results-dir", results]):
    try:
        main(args)
    except SystemExit as exc:
        assert not exc.code, exc.code
runners = sorted(m for m in sys.modules if m.split(".")[-1] in {RUNNERS!r} and m.startswith("fyexp.experiments."))
print("RUNNERS", runners, "TORCH", "torch" in sys.modules, "MATPLOTLIB", "matplotlib" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=cli_env(),
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "RUNNERS [] TORCH False MATPLOTLIB False" in done.stdout, done.stdout.splitlines()[-3:]


def test_every_runners_settings_scope_is_its_config_modules():
    """The report judges settings with ``get_settings_scope`` (no runner import): it must be what the runner hashes."""
    from fyexp.experiments import get_experiment, get_settings_scope

    for runner in RUNNERS:
        scope, experiment = get_settings_scope(runner), get_experiment(runner)
        assert scope.__name__ == f"fyexp.experiments.{runner}_config"
        assert experiment.cell_config is scope.cell_config and experiment.Config is scope.Config
