"""What the reproduction found, per paper, as the README's generated block (rewritten by ``fyexp report``).

The block counts each claim of ``fyexp/reference/claims.yaml`` that the paper makes (``kind: claim`` and
``table_reading``; checks of ours are never counted, checks of the paper's theorems on a line of their own) once per
reading, by its headline verdict — the same verdicts, counts and profiles that ``fyexp claims`` prints and
``results/README.md`` opens with (:func:`fyexp.claims.render.summary_rows`): at the ``paper`` profile when it ran, else
at the reduced profile ``claims``, else at the reduced profile with the most rows, the *profiles* column saying which.
A paper whose claims a departure of the authors' code touches (``fyexp/reference/readings.yaml``) has a row for the
paper's text and a row for the authors' code.

``fyexp report`` rewrites the block of the ``README.md`` beside a results folder named ``results``.  The block lies
between :data:`START` and :data:`END`; :func:`rewrite_block` replaces only what
lies between them, so the text around it stays the author's.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

START = "<!-- fyexp:findings:start -->"
END = "<!-- fyexp:findings:end -->"
PAPER_PROFILE = "paper"
COLUMNS = ("supported", "in direction only", "not resolved at this n", "not supported", "reversed",
           "not yet run at paper")


def claim_outcome(verdicts: list) -> str:
    """One claim's outcome at the ``paper`` profile alone (:data:`COLUMNS`): its verdict there, or ``not yet run at
    paper``.  The block itself counts headline verdicts (:func:`findings_table`); this says whether a claim's
    verdict is the paper profile's."""
    from fyexp.claims.verdicts import DIRECTION_ONLY, NOT_SUPPORTED, REVERSED, SUPPORTED, UNRESOLVED

    at_paper = [v.verdict for v in verdicts if v.profile == PAPER_PROFILE]
    if not at_paper:
        return COLUMNS[-1]
    return {SUPPORTED: COLUMNS[0], DIRECTION_ONLY: COLUMNS[1], UNRESOLVED: COLUMNS[2], NOT_SUPPORTED: COLUMNS[3],
            REVERSED: COLUMNS[4]}.get(at_paper[0], COLUMNS[-1])


def findings_table(verdicts: list, titles: dict[str, str]) -> list[str]:
    """Markdown lines: one row per paper, its claims counted by their headline verdicts — the counts of ``fyexp
    claims`` and ``results/README.md`` (:func:`fyexp.claims.render.reading_heads`) — as ``text/authors`` where a
    departure touches the paper's claims (one number where both readings agree on the count), and at which
    profiles the paper's-text verdicts are (``paper 12, reduced cpu 6``); then one line per paper with checks of its
    theorems (tvem's), their verdicts counted apart from the claims.  Compact, for the README's word budget;
    ``titles`` is kept for the callers (the rows name the paper by its id)."""
    from fyexp.claims.model import PAPERS
    from fyexp.claims.render import SHORT, reading_heads, readings_of, theorem_text
    from fyexp.claims.verdicts import MISSING, NOT_RUN, VERDICTS

    lines = ["| paper | claims | " + " | ".join(SHORT[k] for k in VERDICTS) + " | profiles |",
             "|---|---:|" + "---:|" * len(VERDICTS) + "---|"]
    for paper in PAPERS:
        readings = readings_of(verdicts, paper)
        heads = {r: reading_heads(verdicts, paper, r) for r in readings}
        first = heads[readings[0]]
        if not first:
            continue
        counts = {r: Counter(v.verdict for v in hs) for r, hs in heads.items()}
        cells = ["/".join(dict.fromkeys(str(counts[r].get(k, 0)) for r in readings)) if len(readings) > 1
                 else str(counts[readings[0]].get(k, 0)) for k in VERDICTS]
        where = Counter(("reduced " if v.reduced else "variant " if v.variant else "") + str(v.profile)
                        for v in first if v.verdict not in (NOT_RUN, MISSING))
        profiles = ", ".join(f"{w} {n}" for w, n in sorted(where.items(), key=lambda x: (x[0] != "paper", x[0])))
        lines.append(f"| `{paper}` | {len(first)} | " + " | ".join(cells) + f" | {profiles or '—'} |")
    theorems = [f"`{paper}`: {text}, counted apart from the claims." for paper in PAPERS
                for text in [theorem_text(verdicts, paper)] if text]
    return lines + ["", "Each claim by its headline verdict (`fyexp claims` and `results/README.md` count the same); "
                    "`a/b`: under the paper's text / the authors' code where they differ; *profiles*: where the "
                    "text reading's verdicts are (reduced = a cheaper profile)."] + (["", *theorems] if theorems else [])


def rewrite_block(text: str, lines: list[str]) -> str | None:
    """``text`` with the lines between :data:`START` and :data:`END` replaced by ``lines``; None without both."""
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        return None
    return text[:start] + START + "\n" + "\n".join(lines) + "\n" + text[end:]


class Evidence:
    """The rows (and specs) claims are judged from, with each claim judged at most once
    (:func:`fyexp.claims.verdicts.judge_all`, per claim: a claim's verdicts depend on its own rows only)."""

    def __init__(self, frames: dict, specs: dict):
        self.frames, self.specs = frames, specs
        self._judged: dict[str, list] = {}

    def verdicts(self, claims: list) -> list:
        from fyexp.claims.verdicts import judge_all

        todo = [c for c in claims if c.id not in self._judged]
        for v in judge_all(todo, self.frames, self.specs) if todo else []:
            self._judged.setdefault(v.claim.id, []).append(v)
        return [v for c in claims for v in self._judged.get(c.id, [])]


_KEPT: dict[tuple[Path, Path | None], Evidence] = {}


def keep_evidence(results_dir: Path, experiments_dir: Path | None, evidence: Evidence) -> None:
    """Keep the report's rows and verdicts for :func:`update_findings` of the same command (taken once)."""
    _KEPT[(Path(results_dir).resolve(), experiments_dir)] = evidence


def judged_claims(results_dir: Path, experiments_dir: Path | None = None):
    """Every claim's verdicts and the findings, as ``fyexp claims`` gives them: from the rows of this command's report
    of ``results_dir`` where it kept them (:func:`keep_evidence`; left for :func:`update_findings`, so that no claim
    is judged twice), else judged (:func:`fyexp.claims.command.verdicts_for`).  Raises
    :class:`~fyexp.core.errors.FyexpError` where the claims name experiments without a spec here."""
    evidence = _KEPT.get((Path(results_dir).resolve(), experiments_dir))
    if evidence is None:
        from fyexp.claims.command import verdicts_for

        claims, verdicts = verdicts_for(results_dir, None, None, experiments_dir)
        return verdicts, claims.findings
    from fyexp.claims.model import load_claims

    claims = load_claims(experiments_dir=experiments_dir)
    return evidence.verdicts(claims.claims), claims.findings


def update_findings(readme: Path, results_dir: Path, experiments_dir: Path | None = None) -> bool:
    """Rewrite ``readme``'s findings block from the rows under ``results_dir``; False where it has no block.  The
    verdicts are those ``fyexp claims`` gives (:func:`fyexp.claims.command.verdicts_for`); after a report of the
    same folder in this process, judged from the rows it loaded (:func:`keep_evidence`) rather than again."""
    from fyexp.store.io import atomic_write_text
    from fyexp.reference.rows import papers

    evidence = _KEPT.pop((Path(results_dir).resolve(), experiments_dir), None)
    if not readme.is_file():
        return False
    text = readme.read_text(encoding="utf-8")
    if START not in text:
        return False
    if evidence is not None:
        from fyexp.claims.model import load_claims

        verdicts = evidence.verdicts(load_claims(experiments_dir=experiments_dir).claims)
    else:
        from fyexp.claims.command import verdicts_for

        _, verdicts = verdicts_for(results_dir, None, None, experiments_dir)
    new = rewrite_block(text, findings_table(verdicts, {k: p.title for k, p in papers().items()}))
    if new is None:
        return False
    if new != text:
        atomic_write_text(readme, new)
    return True
