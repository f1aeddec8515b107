"""What the reproduction found, per paper, as the README's generated block (rewritten by ``fyexp report``).

The block counts each claim of ``fyexp/reference/claims.yaml`` (``kind: claim``; our own checks are never counted) once, by its verdict at the ``paper`` profile (the
same verdicts ``fyexp claims`` prints, :func:`fyexp.claims.command.verdicts_for`):

* *supported* — ``supported``;
* *in direction only* — ``supported in direction, not in magnitude``;
* *not resolved at this n* — the interval holds both 0 and the paper's difference;
* *not supported* — ``not supported``;
* *reversed* — ``reversed``;
* *not yet run at paper* — no verdict at ``paper`` (``not run``, ``data missing``, or rows at reduced profiles
  only).

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
    """One claim's column of the block, from its verdicts at every profile (:data:`COLUMNS`)."""
    from fyexp.claims.verdicts import DIRECTION_ONLY, NOT_SUPPORTED, REVERSED, SUPPORTED, UNRESOLVED

    at_paper = [v.verdict for v in verdicts if v.profile == PAPER_PROFILE]
    if not at_paper:
        return COLUMNS[-1]
    return {SUPPORTED: COLUMNS[0], DIRECTION_ONLY: COLUMNS[1], UNRESOLVED: COLUMNS[2], NOT_SUPPORTED: COLUMNS[3],
            REVERSED: COLUMNS[4]}.get(at_paper[0], COLUMNS[-1])


def findings_table(verdicts: list, titles: dict[str, str]) -> list[str]:
    """Markdown lines: one row per paper with claims, its claims counted by :func:`claim_outcome`."""
    from fyexp.claims.model import PAPERS

    by_claim: dict[str, list] = {}
    for v in verdicts:
        if getattr(v.claim, "kind", "claim") == "claim":  # a check of ours is never tallied
            by_claim.setdefault(v.claim.id, []).append(v)
    lines = ["| paper | claims | " + " | ".join(COLUMNS) + " |", "|---|---:|" + "---:|" * len(COLUMNS)]
    for paper in PAPERS:
        outcomes = [claim_outcome(vs) for vs in by_claim.values() if vs[0].claim.paper == paper]
        if not outcomes:
            continue
        counts = Counter(outcomes)
        lines.append(f"| {titles.get(paper, paper)} (`{paper}`) | {len(outcomes)} | "
                     + " | ".join(str(counts.get(c, 0)) for c in COLUMNS) + " |")
    return lines


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


def update_findings(readme: Path, results_dir: Path, experiments_dir: Path | None = None) -> bool:
    """Rewrite ``readme``'s findings block from the rows under ``results_dir``; False where it has no block.  The
    verdicts are those ``fyexp claims`` gives (:func:`fyexp.claims.command.verdicts_for`); after a report of the
    same folder in this process, judged from the rows it loaded (:func:`keep_evidence`) rather than again."""
    from fyexp.io import atomic_write_text
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
