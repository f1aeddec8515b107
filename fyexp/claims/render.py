"""The claims as a researcher reads them: one headline verdict per claim, our checks apart, tallies of claims.

Terminal (rich, wrapped at 100 columns, nothing cut), Markdown and LaTeX per paper (written by ``fyexp report``
under ``results/claims/``), JSON for scripts (every profile's verdict, the headline marked), and the per-paper
summary that opens ``results/README.md``.  Counts are of claims (each by its headline verdict), never of
judgements; checks of ours (``kind: check``) are listed apart and never counted in a paper's tally.
"""

from __future__ import annotations

import json
import textwrap
from collections import Counter
from pathlib import Path

from fyexp.claims.model import PAPERS
from fyexp.claims.verdicts import (DIRECTION_ONLY, MISSING, NOT_RUN, NOT_SUPPORTED, REVERSED, SUPPORTED, UNRESOLVED,
                                   VERDICTS, Verdict)
from fyexp.latex import escape as tex_escape

COLUMNS = ("id", "claim", "the paper says", "paper", "ours", "verdict", "n", "profile")

#: the verdict as the terminal table prints it (the full words stay in ``--long``, JSON, Markdown and LaTeX)
SHORT = {SUPPORTED: "supported", DIRECTION_ONLY: "direction only", UNRESOLVED: "unresolved",
         NOT_SUPPORTED: "not supported", REVERSED: "reversed", NOT_RUN: "not run", MISSING: "data missing"}
WIDTH = 100  # the table's width when piped, and its most in a terminal
ID_WIDTH, VERDICT_WIDTH, N_WIDTH, PROFILE_WIDTH = 31, 14, 8, 11
REDUCED_MARK = "*"
CHECKS_TITLE = "Our checks (not claims of the paper; never counted in its tally)"


def _wrap(text: str, width: int, first: str = "", rest: str | None = None) -> list[str]:
    """``text`` wrapped to ``width`` columns, never cut (a word longer than a line stays whole on its own)."""
    rest = first if rest is None else rest
    return textwrap.wrap(text, width, initial_indent=first, subsequent_indent=rest, break_long_words=False,
                         break_on_hyphens=False) or [first.rstrip()]


def _profile(v: Verdict) -> str:
    return (v.profile or "—") + (REDUCED_MARK if v.reduced else "")


def _line(v: Verdict, claim_id: str, width: int) -> list[str]:
    """id, verdict, n, profile and ours (without the interval when it does not fit) on one line; what does not
    fit wraps under it, indented."""
    head = f"{claim_id:<{ID_WIDTH}} {SHORT[v.verdict]:<{VERDICT_WIDTH}} {v.n or '—':<{N_WIDTH}} " \
           f"{_profile(v):<{PROFILE_WIDTH}} "
    return _wrap(head + (v.ours or "—"), width, "", " " * 6)


def _about(v: Verdict) -> str:
    paper = f" · paper: {v.claim.paper_numbers}" if v.claim.paper_numbers else ""
    return f"{v.claim.place}: {v.claim.text}{paper}"


def _claim_block(mine: list[Verdict], width: int, all_profiles: bool) -> list[tuple[str, str]]:
    top = next(v for v in mine if v.headline)
    cid = top.claim.id
    out = []
    if len(cid) > ID_WIDTH:  # a long id on a line of its own, whole
        out.append((cid, ""))
        cid = ""
    out += [(line, "") for line in _line(top, cid, width)]
    if top.notes:
        out += [(line, "dim") for line in _wrap("; ".join(top.notes), width, " " * 4)]
    if all_profiles:
        for v in mine:
            if v is not top:
                out += [(line, "dim") for line in _line(v, "  also at", width)]
                if v.notes:
                    out += [(line, "dim") for line in _wrap("; ".join(v.notes), width, " " * 4)]
    out += [(line, "dim") for line in _wrap(_about(top), width, "  ", " " * 4)]
    return out


def tally(verdicts: list[Verdict], paper: str) -> tuple[int, Counter, int, int, int]:
    """(claims, their headline verdicts counted, checks, stale rows, dirty rows) of ``paper``: each claim once, each
    stale or dirty row once (among the rows its verdicts read)."""
    mine = [v for v in verdicts if v.claim.paper == paper]
    heads = [v for v in mine if v.headline and v.claim.kind == "claim"]
    checks = len({v.claim.id for v in mine if v.claim.kind == "check"})
    stale = set().union(*[v.stale for v in mine]) if mine else set()
    dirty = set().union(*[v.dirty for v in mine]) if mine else set()
    return len(heads), Counter(v.verdict for v in heads), checks, len(stale), len(dirty)


def summary_line(verdicts: list[Verdict], paper: str) -> str:
    claims, counts, checks, stale, dirty = tally(verdicts, paper)
    words = ", ".join(f"{counts[k]} {k}" for k in VERDICTS if counts.get(k))
    text = f"{paper}: {claims} claim{'s' * (claims != 1)}" + (f" ({words})" if words else "")
    text += f"; {checks} check{'s' * (checks != 1)} of ours" if checks else ""
    text += f"; {stale} stale row{'s' * (stale != 1)} behind these verdicts" if stale else ""
    return text + (f"; {dirty} dirty" if dirty else "")


def short_lines(verdicts: list[Verdict], width: int = WIDTH, all_profiles: bool = False) -> list[tuple[str, str]]:
    """(line, style) pairs: per claim its headline verdict (id, verdict, n, profile, ours), its notes and, with
    ``all_profiles``, its verdicts at the other profiles, dimmed; the claim with its place and the paper's numbers
    dimmed under it; the checks of ours apart; one summary line per paper.  Every line wraps at ``width``."""
    head = f"{'id':<{ID_WIDTH}} {'verdict':<{VERDICT_WIDTH}} {'n':<{N_WIDTH}} {'profile':<{PROFILE_WIDTH}} ours"
    out = [(head, "bold")]
    ids = list(dict.fromkeys(v.claim.id for v in verdicts))
    by_id = {i: [v for v in verdicts if v.claim.id == i] for i in ids}
    claims = [i for i in ids if by_id[i][0].claim.kind == "claim"]
    checks = [i for i in ids if by_id[i][0].claim.kind == "check"]
    for i in claims:
        out += _claim_block(by_id[i], width, all_profiles)
    if checks:
        out += [("", ""), (CHECKS_TITLE, "bold")]
        for i in checks:
            out += _claim_block(by_id[i], width, all_profiles)
    out.append(("", ""))
    for paper in PAPERS:
        if any(v.claim.paper == paper for v in verdicts):
            out += [(line, "") for line in _wrap(summary_line(verdicts, paper), width, "", "  ")]
    if any(v.reduced for v in verdicts if v.headline or all_profiles):
        out.append((f"{REDUCED_MARK} a reduced profile: the verdict holds at that profile only, never at the "
                    "paper's", "dim"))
    return out


def long_lines(verdicts: list[Verdict], width: int = WIDTH, all_profiles: bool = False) -> list[tuple[str, str]]:
    """(line, style) pairs: per headline verdict (every verdict with ``all_profiles``) its id, full verdict, n and
    profile, then the claim, its place, the paper's words, the paper's numbers, ours with the interval and the
    notes, each wrapped to ``width`` and none cut."""
    out = []
    shown = [v for v in verdicts if v.headline or all_profiles]
    for v in sorted(shown, key=lambda v: v.claim.kind != "claim"):  # stable: claims, then checks
        kind = {"reduced": " (reduced profile)", "variant": " (variant)"}.get(v.profile_kind, "")
        title = f"{v.claim.id}  {v.verdict}{kind}  n = {v.n or '—'}  profile {v.profile or '—'}" + \
                ("" if v.headline else "  (not the headline)") + ("  [our check]" if v.claim.kind == "check" else "")
        out += [(line, "bold") for line in _wrap(title, width, "", "  ")]
        for name, text in (("claim", v.claim.text), ("where", v.claim.place), ("says", v.claim.quote),
                           ("paper", v.claim.paper_numbers), ("ours", v.ours), ("notes", "; ".join(v.notes)),
                           ("why" if v.claim.kind == "check" else "caveat", v.claim.note)):
            if text:
                out += [(line, "") for line in _wrap(text, width, f"  {name + ':':<8}", " " * 10)]
        out.append(("", ""))
    for paper in PAPERS:
        if any(v.claim.paper == paper for v in verdicts):
            out += [(line, "") for line in _wrap(summary_line(verdicts, paper), width, "", "  ")]
    return out


def print_table(verdicts: list[Verdict], console, long: bool = False, all_profiles: bool = False) -> None:
    """The table on ``console`` (:func:`short_lines`, or :func:`long_lines` with ``long``), wrapped at 100 columns
    (a narrower terminal's width when it has one; piped: 100)."""
    from rich.console import Console
    from rich.text import Text

    class Piped(Console):
        def on_broken_pipe(self) -> None:  # rich would exit 1; the reader leaving is no error (claims_command)
            raise BrokenPipeError

    if not console.is_terminal:  # piped: laid out for 100 columns whatever COLUMNS says
        console = Piped(width=WIDTH, soft_wrap=False)
    width = min(console.width, WIDTH)
    for line, style in (long_lines if long else short_lines)(verdicts, width, all_profiles):
        console.print(Text(line, style=style), no_wrap=False, overflow="fold", crop=False, width=width)


def as_json(verdicts: list[Verdict]) -> str:
    return json.dumps([v.as_dict() for v in verdicts], indent=1, ensure_ascii=False)


# ---- files ---------------------------------------------------------------------------------------------------
def _cells(v: Verdict) -> tuple[str, ...]:
    return (v.claim.id, v.claim.text, _quote(v), v.claim.paper_numbers or "—",
            v.ours or "—", v.label, v.n or "—", v.profile or "—")


def _quote(v: Verdict) -> str:
    if v.claim.kind == "check":
        return f"{v.claim.note} ({v.claim.where})"
    return f"“{v.claim.quote}” ({v.claim.place})"


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_table(rows: list[Verdict]) -> list[str]:
    return ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)] + \
        ["| " + " | ".join(_md_cell(c) for c in _cells(v)) + " |" for v in rows]


def markdown(paper: str, verdicts: list[Verdict], findings=()) -> str:
    heads = [v for v in verdicts if v.headline]
    claims = [v for v in heads if v.claim.kind == "claim"]
    checks = [v for v in heads if v.claim.kind == "check"]
    others = [v for v in verdicts if not v.headline]
    lines = [f"# Claims of `{paper}`", "", "Regenerated by `fyexp report` from the result CSVs and "
             "[`claims.yaml`](../../fyexp/reference/claims.yaml); verdicts: see `fyexp claims --help`.  Each claim "
             "quotes the paper (paper id, section, line of its text) and has one verdict: at the `paper` profile "
             "when it ran, else at the reduced profile `claims` where it ran, else at the reduced profile with the "
             "most rows (labelled).", "",
             f"**{summary_line(verdicts, paper)}.**", ""]
    lines += _md_table(claims)
    if checks:
        lines += ["", f"## {CHECKS_TITLE}", ""] + _md_table(checks)
    if others:
        lines += ["", "## Other profiles (not the headline; variants never are)", ""] + _md_table(others)
    if findings:
        lines += ["", "## Findings (the authors' code against the paper's text)", ""]
        lines += [f"- **{f.id}** (claim `{f.claim}`; {f.where}): {f.text}; rows: "
                  + ", ".join(f"`{s.describe()}`" for s in f.rows) for f in findings]
    return "\n".join(lines) + "\n"


def _tex_table(rows: list[Verdict]) -> list[str]:
    head = " & ".join(COLUMNS) + r" \\"
    body = [" & ".join(tex_escape(c) for c in _cells(v)) + r" \\" for v in rows]
    return [r"\begin{tabular}{p{2.4cm}p{3.2cm}p{3.6cm}p{1.8cm}p{2.6cm}p{2.4cm}ll}", r"\hline", head, r"\hline",
            *body, r"\hline", r"\end{tabular}"]


def latex(paper: str, verdicts: list[Verdict]) -> str:
    heads = [v for v in verdicts if v.headline]
    lines = _tex_table([v for v in heads if v.claim.kind == "claim"])
    checks = [v for v in heads if v.claim.kind == "check"]
    if checks:
        lines += ["", "% " + CHECKS_TITLE, *_tex_table(checks)]
    return "\n".join(lines + [""])


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
    """Per paper: its claims counted by their headline verdicts, its checks of ours (apart), the stale rows behind
    them (each once), with links to its table."""
    lines = ["| paper | claims | " + " | ".join(VERDICTS) + " | checks of ours | stale rows | table |",
             "|---|---|" + "---|" * len(VERDICTS) + "---|---|---|"]
    for paper in PAPERS:
        if not any(v.claim.paper == paper for v in verdicts):
            continue
        claims, counts, checks, stale, _ = tally(verdicts, paper)
        lines.append(f"| `{paper}` | {claims} | " + " | ".join(str(counts.get(k, 0)) for k in VERDICTS)
                     + f" | {checks} | {stale} | [md]({links.get(paper, '')}) |")
    lines += ["", "Counts are claims, each by its one headline verdict: at the `paper` profile when it ran, else at "
              "the reduced profile `claims` where it ran, else the reduced profile with the most rows (labelled so in "
              "the table); variants (`paper+key=value`) and "
              "our own checks are never counted. *Stale rows*: rows behind these verdicts whose code changed since "
              "they ran, each counted once."]
    return lines
