"""``fyexp report``: rebuild every table (Markdown + LaTeX) and figure (PNG) from the result CSVs alone.

Writes, for each experiment with results, ``results/<experiment>/tables/*.{md,tex}`` (row-level statuses,
:mod:`fyexp.report.tables`) and ``results/<experiment>/figures/*.png`` (the figure functions its spec names in
``plots:``, :mod:`fyexp.report.figures`; the report never imports the runners), and over all experiments the index
``results/README.md`` (:mod:`fyexp.report.index`): the coverage of every published table
(:mod:`fyexp.report.coverage`), dirty and stale rows, and the facts of each run (:mod:`fyexp.report.runs`).

A table or figure is drawn only when what it is drawn from changed (:mod:`fyexp.report.cache`, the manifest
``results/report-manifest.json``; ``cache=False``, ``fyexp report --no-cache``, draws everything).  Loading reads
only: the report writes its outputs (tables, figures, the index, the claims tables, ``results.csv`` where its text
changed) and the manifest, nothing else.  The claims' verdicts are judged once per report: the claims tables and the
README's findings block (:mod:`fyexp.report.findings`) share them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from fyexp.reference.rows import joined_cells
from fyexp.report.architectures import TEXT_TABLES, rendered, score_text, text_status, text_table_markdown
from fyexp.report.cache import Manifest, cached, table_key, write_text_if_changed
from fyexp.report.coverage import coverage, declared_tables, parse_table_ref
from fyexp.report.figures import FigureContext, draw_figures
from fyexp.report.index import index_markdown
from fyexp.run.spec_freshness import row_freshness
from fyexp.store.provenance.freshness import code_column
from fyexp.report.runs import RunFacts, planned_seeds, run_facts
from fyexp.report.tables import SUMMARY_COLUMNS, compare, summarize, table_stem, write_table
from fyexp.report.tolerance import EXACT
from fyexp.store.results import ResultStore, atomic_write_text
from fyexp.spec.specs import ExperimentSpec, available_specs, load_spec

__all__ = ["build_report", "report_experiment", "parse_table_ref", "ExperimentReport"]


@dataclass
class ExperimentReport:
    spec: ExperimentSpec
    tables: list[tuple[str, str, str, list[Path]]] = field(default_factory=list)  # (title, profile, status, files)
    table_counts: list[str] = field(default_factory=list)  # per entry of ``tables``: its row-level counts
    not_run_tables: list[str] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)
    profiles: list[str] = field(default_factory=list)
    rows: int = 0
    facts: RunFacts = field(default_factory=RunFacts)


@dataclass
class _Loaded:
    spec: ExperimentSpec
    frame: pd.DataFrame
    summary: pd.DataFrame
    judged: pd.Series | None = None   # per row of ``frame``, its Freshness, both axes (judged once per report)


def _load(spec: ExperimentSpec, results_dir: Path, superseded: bool = False, *, write: bool = False) -> _Loaded:
    """An experiment's current rows (with ``superseded``, also those of cells since rerun at other settings, as
    profiles of their own: :func:`fyexp.store.results.superseded_rows`).  Reads only; with ``write`` (the report, which
    means to write) ``results.csv`` is rebuilt from the cell files as well (:meth:`ResultStore.consolidate`)."""
    store = ResultStore(results_dir, spec.name)
    frame = store.consolidate() if write else store.load()
    if superseded:
        from fyexp.store.results import superseded_rows

        old = superseded_rows(ResultStore(results_dir, spec.name))
        frame = frame if old.empty else pd.concat([frame, old], ignore_index=True)
    judged = None
    if not frame.empty:  # every row's freshness, once: the tables' statuses, the run facts and the claims read it
        judged = row_freshness(spec, frame, results_dir / spec.name)
        frame["freshness"] = code_column(judged)
    summary = summarize(frame) if not frame.empty else pd.DataFrame(columns=SUMMARY_COLUMNS)
    return _Loaded(spec, frame, summary, judged)


def _rows_with_results(summary: pd.DataFrame, paper: str, table: str) -> set[str]:
    rows = summary[(summary["paper"] == paper) & (summary["table"] == table)]["paper_row"]
    return {r for r in rows if r}


def _other_rows(this: _Loaded, paper: str, table: str, loaded: dict[str, _Loaded]) -> dict[str, list[str]]:
    """Published rows of ``paper`` Table ``table`` that another experiment declaring it produces and this one does
    not (NVDM's row belongs to ``nvdm``, FY VAE's to ``fy-nvdm``)."""
    mine = _rows_with_results(this.summary, paper, table)
    owners = declared_tables([x.spec for x in loaded.values()]).get((paper, table), [])
    out = {}
    for name in owners:
        if name == this.spec.name or name not in loaded:
            continue
        theirs = sorted(_rows_with_results(loaded[name].summary, paper, table) - mine)
        if theirs:
            out[name] = theirs
    return out


def report_experiment(spec: ExperimentSpec, results_dir: Path, loaded: dict[str, _Loaded] | None = None,
                      figures: bool = True, manifest: Manifest | None = None) -> ExperimentReport:
    """One experiment's tables (and, with ``figures``, its figures); with a ``manifest`` only those whose inputs
    changed are drawn (:mod:`fyexp.report.cache`)."""
    here = (loaded or {}).get(spec.name) or _load(spec, results_dir, write=True)
    loaded = loaded or {spec.name: here}
    frame, summary = here.frame, here.summary
    store = ResultStore(results_dir, spec.name)
    report = ExperimentReport(spec=spec, rows=len(frame), facts=run_facts(spec, frame, store.folder, here.judged))
    if frame.empty:
        report.not_run_tables = list(spec.tables)
        return report
    report.profiles = list(dict.fromkeys(frame["profile"].dropna().astype(str)))
    tables_dir = store.folder / "tables"
    for ref in spec.tables:
        paper, table = parse_table_ref(ref)
        if (paper, table) in TEXT_TABLES:  # a table the code states (VR Table 4): rendered from the code itself
            *entry, counts = _text_table(paper, table, f"{ref} — {spec.title}", tables_dir, manifest)
            report.tables.append(tuple(entry))
            report.table_counts.append(counts)
            continue
        ran = False
        for profile in report.profiles:
            if summary[(summary["profile"] == profile) & (summary["paper"] == paper)
                       & (summary["table"] == table)].empty:
                continue
            compared = compare(summary, paper, table, profile, planned_seeds=planned_seeds(spec, profile, frame),
                               exclude_rows=_other_rows(here, paper, table, loaded))
            ran = True
            files = _write_table(compared, f"{ref} — {spec.title}", tables_dir, manifest)
            report.tables.append((ref, profile, compared.status, files))
            report.table_counts.append(compared.count_line())
        if not ran:
            report.not_run_tables.append(ref)
    if not figures:
        return report
    report.figures = draw_figures(spec.plots, FigureContext(spec.name, _figure_rows(frame), store.folder,
                                                            _loader(loaded, results_dir)), manifest)
    return report


def _write_table(compared, title: str, folder: Path, manifest: Manifest | None) -> list[Path]:
    """:func:`fyexp.report.tables.write_table`, skipped when the manifest holds the same table (its key:
    :func:`fyexp.report.cache.table_key`)."""
    stem = table_stem(compared)
    if manifest is not None:
        cached(manifest, f"table:{manifest.rel(folder)}/{stem}", table_key(compared, title),
               lambda: (write_table(compared, title, folder), {}))
        return [folder / f"{stem}.md", folder / f"{stem}.tex"]
    return write_table(compared, title, folder)


def _text_table(paper: str, table: str, title: str, folder: Path,
                manifest: Manifest | None = None) -> tuple[str, str, str, list[Path], str]:
    """Write a text table (:mod:`fyexp.report.architectures`: rendered from the models the code builds, the rendering
    kept in the manifest); (title, profile, status, files, counts) for the index."""
    cells = joined_cells()
    pub = cells[(cells["paper"] == paper) & (cells["table"] == table)]
    ours = rendered(paper, table, manifest)
    statuses = score_text(pub, ours)
    exact = statuses.count(EXACT)
    status = text_status(statuses)
    path = folder / f"{paper}-table{table}-code.md"
    write_text_if_changed(path, text_table_markdown(title, pub, ours, statuses, status))
    counts = f"✓ exact {exact} of {len(statuses)} (text, compared as printed)"
    return title.split(" — ")[0], "code", status, [path], counts


def _ok(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["status"].fillna("ok") == "ok"] if not frame.empty else frame


def _figure_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows a figure draws from: status ``ok``, without the ``freshness`` column (a verdict on the code, not a
    number: a figure never shows it, so a new commit redraws nothing)."""
    return _ok(frame).drop(columns=["freshness"], errors="ignore")


def _loader(loaded: dict[str, _Loaded], results_dir: Path):
    """Any experiment's rows (:func:`_figure_rows`) by name, for figures that compare experiments."""
    def load(name: str) -> pd.DataFrame:
        frame = loaded[name].frame if name in loaded else ResultStore(results_dir, name).load()
        return _figure_rows(frame)

    return load


def write_index(reports: list[ExperimentReport], loaded: dict[str, _Loaded], results_dir: Path,
                experiments_dir: Path | None = None, shared: bool = False, manifest: Manifest | None = None) -> Path:
    specs = [x.spec for x in loaded.values()]
    summaries = [x.summary.assign(experiment=name) for name, x in loaded.items() if not x.summary.empty]
    summaries = pd.concat(summaries, ignore_index=True) if summaries else \
        pd.DataFrame(columns=SUMMARY_COLUMNS + ["experiment"])
    lines = coverage(specs, summaries, manifest)
    path = results_dir / "README.md"
    write_text_if_changed(path, index_markdown(sorted(reports, key=lambda r: r.spec.name), lines, results_dir, specs,
                                           claims_lines=write_claims(loaded, results_dir, experiments_dir,
                                                                     shared)))
    return path


def write_claims(loaded: dict[str, _Loaded], results_dir: Path, experiments_dir: Path | None = None,
                 shared: bool = False) -> list[str]:
    """Each paper's claims table (``results/claims/<paper>.{md,tex}``) and the summary lines for the index.

    With ``shared`` (the rows loaded are the current ones, as ``fyexp claims`` reads them: no ``--superseded``), the
    rows and verdicts are kept for the findings block of the same command (:class:`fyexp.report.findings.Evidence`),
    which then judges no claim twice."""
    from fyexp.claims import load_claims
    from fyexp.claims.render import summary_markdown, write_paper_tables
    from fyexp.claims.verdicts import claim_rows
    from fyexp.report.findings import Evidence, keep_evidence

    claims = load_claims(check=False)  # checked by `fyexp claims` and the tests against fyexp's own experiments
    # only the claims every one of whose rows an experiment of this report writes: a folder of one's own
    # experiments (--experiments-dir) gets no claims section rather than an error or a page of "not run"
    judged = [c for c in claims.claims if all(s.experiment in loaded for s in c.selectors())]
    if not judged:
        return []
    ids = {c.id for c in judged}
    findings = [f for f in claims.findings if f.claim in ids]
    # the rows `fyexp claims` reads (fyexp.claims.verdicts.load_frames): the freshness of each row is its cell's,
    # computed once by _load (a derived row carries its source row's)
    evidence = Evidence({name: claim_rows(name, x.spec, x.frame, results_dir / name, x.judged)
                         for name, x in loaded.items()},
                        {name: x.spec for name, x in loaded.items()})
    verdicts = evidence.verdicts(judged)
    if shared:
        keep_evidence(results_dir, experiments_dir, evidence)
    written = write_paper_tables(verdicts, findings, results_dir / "claims")
    relink_claims_tables(written, results_dir / "claims")
    return summary_markdown(verdicts, {p: files[0].relative_to(results_dir).as_posix() for p, files in written.items()})


def relink_claims_tables(written: dict, folder: Path) -> None:
    """The claims tables link ``claims.yaml`` as seen from ``results/claims/`` of a checkout (``../../fyexp/``); a
    report written elsewhere gets the path that reaches fyexp's files from there (:func:`fyexp.report.index.relink`)."""
    from fyexp.report.index import package_path

    for files in written.values():
        for path in files:
            if path.suffix == ".md":
                text = path.read_text(encoding="utf-8")
                fixed = text.replace("](../../fyexp/", f"]({package_path(folder)}/fyexp/")
                if fixed != text:
                    atomic_write_text(path, fixed)


def build_report(names: list[str] | None, results_dir: Path, experiments_dir: Path | None = None,
                 superseded: bool = False, cache: bool = True, vector: bool = False) -> list[ExperimentReport]:
    """Tables and figures of ``names`` (default: every experiment), and the index over every experiment; with
    ``superseded`` the rows of cells since rerun at other settings too, as profiles of their own.  Outputs whose
    inputs did not change are kept (:mod:`fyexp.report.cache`); ``cache=False`` draws every one; ``vector`` writes
    a PDF beside each PNG (:class:`fyexp.report.figures.vector_copies`)."""
    from fyexp.report.figures import vector_copies

    with vector_copies(vector):
        return _build_report(names, results_dir, experiments_dir, superseded, cache)


def _build_report(names: list[str] | None, results_dir: Path, experiments_dir: Path | None, superseded: bool,
                  cache: bool) -> list[ExperimentReport]:
    """:func:`build_report`, with the figures' vector copies set."""
    every = available_specs(experiments_dir)
    names = names or every
    for name in dict.fromkeys([*every, *names]):   # tables and figures are written under each folder: never through
        ResultStore(results_dir, name).refuse_links_leaving()   # a link out of the results folder (as `run`)
    loaded = {name: _load(load_spec(name, experiments_dir), results_dir, superseded, write=True) for name in every}
    for name in names:
        if name not in loaded:  # an unknown name: load_spec raises the one-line error
            loaded[name] = _load(load_spec(name, experiments_dir), results_dir, superseded, write=True)
    manifest = Manifest(results_dir, enabled=cache)
    reports = [report_experiment(loaded[name].spec, results_dir, loaded, manifest=manifest) for name in names]
    done = {r.spec.name for r in reports}
    # the index always covers every experiment; the others' tables are rebuilt too, their figures left as they are
    all_reports = reports + [report_experiment(loaded[n].spec, results_dir, loaded, figures=False, manifest=manifest)
                             for n in every if n not in done]
    write_index(all_reports, loaded, results_dir, experiments_dir, shared=not superseded, manifest=manifest)
    manifest.forget_unseen([f"table:{manifest.rel(results_dir / r.spec.name)}/" for r in all_reports]
                           + [f"figure:{manifest.rel(results_dir / n)}/" for n in done])
    manifest.save()
    return reports
