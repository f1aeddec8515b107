"""``fyexp claims`` as the command line runs it: the answer kept in the user cache.

Judging every claim reads every result row and run record (seconds, and pandas and scipy to import), so the answer
(the JSON, or the table's lines at this width) and the warnings the judging printed (said again when read back) are
kept under :func:`fyexp.run.derivation.derivation_inputs` of the results folder.  After a clone (an empty cache) the
verdicts ``fyexp report`` kept beside the same files' contents (:mod:`fyexp.claims.stored`) answer instead.
"""

from __future__ import annotations

import sys
from pathlib import Path

from rich.console import Console

from fyexp.run.progress import emit_answer, table_width, with_stderr


def claims_command(paper: str | None, profile: str | None, json_out: bool, results_dir: Path,
                   experiments_dir: Path | None, console: Console, long: bool = False,
                   all_profiles: bool = False) -> None:
    """Print ``paper``'s claims' verdicts (all papers: ``None``) at ``profile`` (module docstring)."""
    from fyexp.run.derivation import derivation_inputs
    from fyexp.store.user_cache import remembered

    width = table_width(console)
    args = (paper, profile, json_out, results_dir, experiments_dir, width, long, all_profiles)
    key = derivation_inputs([results_dir], experiments_dir) if Path(results_dir).is_dir() else None
    if key is None:
        emit_answer(_answer(*args), console, width)
        return
    judged: list[bool] = []

    def derive():
        judged.append(True)
        from fyexp.claims.stored import kept_answer

        kept = kept_answer(*args)   # the verdicts `fyexp report` kept beside these very files
        return (kept, "") if kept is not None else with_stderr(_answer, *args)

    name = repr((paper, profile, json_out, None if json_out else width, long, all_profiles,
                 str(Path(results_dir).resolve()), str(Path(experiments_dir).resolve()) if experiments_dir else None))
    answer, warnings = remembered("claims-answer", name, key, derive)
    if warnings and not judged:     # read back: what the judging said, said again
        sys.stderr.write(warnings)
        sys.stderr.flush()
    emit_answer(answer, console, width)


def _answer(*args):   # imported when judging: pandas and scipy load only then
    from fyexp.claims.command import claims_answer

    return claims_answer(*args)
