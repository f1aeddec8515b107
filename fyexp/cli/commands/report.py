"""``fyexp report``: every table and figure rebuilt from the result CSVs (:func:`fyexp.report.build_report`), one
line per file written; then the claims' verdicts and ``list``'s and ``show``'s summaries kept beside the results
(:func:`fyexp.claims.stored.keep_verdicts`, :func:`fyexp.run.overview.keep_summaries`), and the README's findings
block rewritten beside a results folder named ``results`` (one of another name leaves the README alone)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from fyexp.run.progress import say


def report_command(names: list[str] | None, results: Path, experiments_dir: Path | None, *, superseded: bool,
                   out: Console, err: Console, cache: bool = True, vector: bool = False) -> None:
    """Report the experiments ``names`` (None: all) of the results folder ``results``; ``cache=False`` draws every
    table and figure again (:mod:`fyexp.report.cache`); ``vector`` writes a PDF beside each PNG."""
    from fyexp.claims.stored import keep_verdicts
    from fyexp.run.overview import keep_summaries
    from fyexp.report import build_report
    from fyexp.report.findings import judged_claims, update_findings
    from fyexp.report.runs import damaged_studies
    from fyexp.store.results import ResultStore
    from fyexp.spec.specs import available_specs

    stores = [ResultStore(results, name) for name in names or available_specs(experiments_dir)]
    for store in stores:   # read and written only inside the results folder
        store.refuse_links_leaving()
    for path, problem in (d for store in stores for d in damaged_studies(store.folder)):  # cells': ResultStore.load
        say(err, f"warning: skipped damaged study file {path} ({problem}); move it away and rerun `fyexp tune`")
    for rep in build_report(names, results, experiments_dir, superseded=superseded, cache=cache, vector=vector):
        for title, profile, status, files in rep.tables:
            say(out, f"{rep.spec.name}: {title} [{profile}] {status} → {files[0]}")
        for path in rep.figures:
            pdf = Path(path).with_suffix(".pdf")
            say(out, f"{rep.spec.name}: figure → {path}" + (f" (and {pdf.name})" if vector and pdf.is_file() else ""))
        if not rep.rows:
            say(out, f"{rep.spec.name}: not yet run")
    say(out, f"index → {results / 'README.md'}")
    readme = results.resolve().parent / "README.md"
    # the claims' verdicts, judged from the report's rows, kept last: their key covers every file written above
    kept = keep_verdicts(results, experiments_dir, judge=lambda: judged_claims(results, experiments_dir))
    if kept is not None:
        say(out, f"claims' verdicts → {kept}")
    summaries = keep_summaries(results, experiments_dir)   # list's and show's, for a fresh clone
    if summaries is not None:
        say(out, f"list's and show's summaries → {summaries}")
    if results.resolve().name == "results" and update_findings(readme, results, experiments_dir):
        say(out, f"findings → {readme}")
