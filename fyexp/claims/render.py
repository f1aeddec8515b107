"""The claims table as a researcher reads it: id, claim, the paper's numbers, ours, verdict, n, profile.

Terminal (rich, readable at 100 columns), Markdown and LaTeX per paper (written by ``fyexp report`` under
``results/claims/``), JSON for scripts, and the per-paper summary that opens ``results/README.md``.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections import Counter
from pathlib import Path

from fyexp.claims.model import PAPERS
from fyexp.claims.verdicts import (DIRECTION_ONLY, MISSING, NOT_RUN, NOT_SUPPORTED, REVERSED, SUPPORTED, VERDICTS,
                                    Verdict)

COLUMNS = ("id", "claim", "paper", "ours", "verdict", "n", "profile")


def _cells(v: Verdict) -> tuple[str, ...]:
    claim = f"{v.claim.text} ({v.claim.where})" if v.claim.where else v.claim.text
    return (v.claim.id, claim, v.claim.paper_numbers or "—", v.ours or "—", v.label, v.n or "—", v.profile or "—")


#: the verdict as the terminal table prints it (the full word stays in ``--long``, JSON, Markdown and LaTeX)
SHORT = {SUPPORTED: "supported", DIRECTION_ONLY: "direction only", NOT_SUPPORTED: "not supported",
         REVERSED: "reversed", NOT_RUN: "not run", MISSING: "data missing"}
WIDTH = 100  # the table's width when piped, and its most in a terminal
ID_WIDTH, VERDICT_WIDTH, N_WIDTH, PROFILE_WIDTH = 31, 14, 8, 11
REDUCED_MARK = "*"


def _fit(text: str, width: int, sep: str = " ") -> str:
    """``text`` in at most ``width`` characters: cut at the last ``sep`` that fits (a whole word), else hard, with
    ``…`` marking the cut."""
    if len(text) <= width:
        return text
    head = text[: width - 1]
    cut = head.rfind(sep)
    return (head[:cut] if cut > width // 2 else head).rstrip(" -;,") + "…"


def _compact(ours: str) -> str:
    """Our numbers without their interval: ``0.636 vs 0.6056; diff 0.03 [0.0003, 0.06]`` → ``0.636 vs 0.6056``."""
    return re.sub(r"\s*\[[^]]*\]", "", ours.split("; diff")[0]).strip()


def _line(v: Verdict, first: bool, width: int) -> str:
    profile = (v.profile or "—") + (REDUCED_MARK if v.reduced else "")
    head = (f"{_fit(v.claim.id, ID_WIDTH, '-') if first else '':<{ID_WIDTH}} {SHORT[v.verdict]:<{VERDICT_WIDTH}} "
            f"{_fit(v.n or '—', N_WIDTH):<{N_WIDTH}} {_fit(profile, PROFILE_WIDTH, '-'):<{PROFILE_WIDTH}} ")
    return head + _fit(_compact(v.ours) or "—", width - len(head))


def _about(v: Verdict) -> str:
    where = f"{v.claim.where}: " if v.claim.where else ""
    paper = f" · paper {v.claim.paper_numbers}" if v.claim.paper_numbers else ""
    return f"{where}{v.claim.text}{paper}"


def short_lines(verdicts: list[Verdict], width: int = WIDTH) -> list[tuple[str, str]]:
    """(line, style) pairs: per claim, one line per profile judged (id, verdict, n, profile, ours without the
    interval), its notes (stale or dirty rows, n = 1, what is missing) dimmed under it, and the claim with the
    paper's numbers dimmed under the claim; every line at most ``width`` characters."""
    head = f"{'id':<{ID_WIDTH}} {'verdict':<{VERDICT_WIDTH}} {'n':<{N_WIDTH}} {'profile':<{PROFILE_WIDTH}} ours"
    out = [(head, "bold")]
    for claim_id in dict.fromkeys(v.claim.id for v in verdicts):
        mine = [v for v in verdicts if v.claim.id == claim_id]
        for i, v in enumerate(mine):
            out.append((_line(v, i == 0, width), ""))
            if v.notes:
                out.append((_fit("    " + "; ".join(v.notes), width), "dim"))
        out.append((_fit("  " + _about(mine[0]), width), "dim"))
    if any(v.reduced for v in verdicts):
        out.append((f"{REDUCED_MARK} a reduced profile: the verdict holds at that profile only, never at the "
                    "paper's", "dim"))
    return out


def long_lines(verdicts: list[Verdict], width: int = WIDTH) -> list[tuple[str, str]]:
    """(line, style) pairs: per judgement, its id, full verdict, n and profile, then the claim, the paper's
    numbers, ours with the interval and the notes, each wrapped to ``width``."""
    out = []
    for v in verdicts:
        reduced = " (reduced profile)" if v.reduced else ""
        out.append((_fit(f"{v.claim.id}  {v.verdict}{reduced}  n = {v.n or '—'}  profile {v.profile or '—'}", width),
                    "bold"))
        claim = f"{v.claim.text} ({v.claim.where})" if v.claim.where else v.claim.text
        for name, text in (("claim", claim), ("paper", v.claim.paper_numbers), ("ours", v.ours),
                           ("notes", "; ".join(v.notes))):
            if text:
                out += [(line, "") for line in textwrap.wrap(text, width, initial_indent=f"  {name + ':':<7}",
                                                              subsequent_indent=" " * 9)]
        out.append(("", ""))
    return out


def print_table(verdicts: list[Verdict], console, long: bool = False) -> None:
    """The table on ``console`` (:func:`short_lines`, or :func:`long_lines` with ``long``), at most 100 columns
    (a narrower terminal's width when it has one; piped: 100)."""
    from rich.console import Console
    from rich.text import Text

    if not console.is_terminal:  # piped: laid out for 100 columns whatever COLUMNS says
        console = Console(width=WIDTH, soft_wrap=False)
    width = min(console.width, WIDTH)
    for line, style in (long_lines if long else short_lines)(verdicts, width):
        console.print(Text(line, style=style), no_wrap=True, overflow="ellipsis", crop=False, width=width)


def as_json(verdicts: list[Verdict]) -> str:
    return json.dumps([v.as_dict() for v in verdicts], indent=1, ensure_ascii=False)


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(paper: str, verdicts: list[Verdict], findings=()) -> str:
    lines = [f"# Claims of `{paper}`", "", "Regenerated by `fyexp report` from the result CSVs and "
             "[`claims.yaml`](../../fyexp/reference/claims.yaml); verdicts: see `fyexp claims --help`.", "",
             "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(_md_cell(c) for c in _cells(v)) + " |" for v in verdicts]
    if findings:
        lines += ["", "## Findings (the authors' code against the paper's text)", ""]
        lines += [f"- **{f.id}** (claim `{f.claim}`; {f.where}): {f.text}; rows: "
                  + ", ".join(f"`{s.describe()}`" for s in f.rows) for f in findings]
    return "\n".join(lines) + "\n"


def _tex(text: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"), ("#", r"\#"),
                 ("$", r"\$"), ("^", r"\^{}"), ("{", r"\{"), ("}", r"\}")):
        text = text.replace(a, b) if a != "\\" else text
    return text.replace("±", r"$\pm$").replace("→", r"$\to$").replace("δ", r"$\delta$")


def latex(paper: str, verdicts: list[Verdict]) -> str:
    head = " & ".join(COLUMNS) + r" \\"
    body = [" & ".join(_tex(c) for c in _cells(v)) + r" \\" for v in verdicts]
    return "\n".join([r"\begin{tabular}{p{2.6cm}p{4cm}p{2cm}p{3cm}p{3cm}ll}", r"\hline", head, r"\hline", *body,
                      r"\hline", r"\end{tabular}", ""])


def write_paper_tables(verdicts: list[Verdict], findings, folder: Path) -> dict[str, list[Path]]:
    from fyexp.results import atomic_write_text

    written = {}
    for paper in PAPERS:
        mine = [v for v in verdicts if v.claim.paper == paper]
        if not mine:
            continue
        md, tex = folder / f"{paper}.md", folder / f"{paper}.tex"
        atomic_write_text(md, markdown(paper, mine, [f for f in findings if f.paper == paper]))
        atomic_write_text(tex, latex(paper, mine))
        written[paper] = [md, tex]
    return written


def summary_markdown(verdicts: list[Verdict], links: dict[str, str]) -> list[str]:
    """Per paper: claims, and verdicts counted (judgements at every profile), with links to its table."""
    lines = ["| paper | claims | " + " | ".join(VERDICTS) + " | table |", "|---|---|" + "---|" * len(VERDICTS) + "---|"]
    for paper in PAPERS:
        mine = [v for v in verdicts if v.claim.paper == paper]
        if not mine:
            continue
        counts = Counter(v.verdict for v in mine)
        claims = len({v.claim.id for v in mine})
        lines.append(f"| `{paper}` | {claims} | " + " | ".join(str(counts.get(k, 0)) for k in VERDICTS)
                     + f" | [md]({links.get(paper, '')}) |")
    lines += ["", "Counts are judgements: one per claim and profile with its rows (a reduced profile's verdict is "
              "labelled so in the table)."]
    return lines
