"""The claims as a researcher reads them: one headline verdict per claim and reading, our checks apart, tallies.

Terminal (rich, at the terminal's width; piped, at ``$COLUMNS`` or 100; nothing cut), Markdown and LaTeX per paper
(written by ``fyexp report`` under ``results/claims/``), JSON for scripts (every profile's verdict, the headline
marked, each reading's headline on it), and the per-paper summary that opens ``results/README.md`` and fills the
README's findings block (:func:`summary_rows`: the same counts in the three places).  Counts are of claims (each by
its headline verdict under a reading), never of judgements, and each says at which profile its verdicts are; checks
of ours (``kind: check``) and checks of the paper's theorems (``kind: theorem_check``) are listed apart and never
counted among the claims; table readings (``kind: table_reading``) are counted and labelled.  A note that several
claims share (a long one) is printed once, as a numbered note after the table, and referred to by its number.
"""

from __future__ import annotations

import json
import textwrap
from collections import Counter
from pathlib import Path

from fyexp.claims.model import PAPERS
from fyexp.claims.verdict import (DIRECTION_ONLY, MISSING, NOT_RUN, NOT_SUPPORTED, REVERSED, SUPPORTED, UNRESOLVED,
                                   VERDICTS, Verdict)
from fyexp.core.latex import escape as tex_escape
from fyexp.run.progress import TABLE_WIDTH, print_lines, table_width

COLUMNS = ("id", "claim", "the paper says", "paper", "ours", "verdict", "n", "profile")

#: the verdict as the terminal table prints it (the full words stay in ``--long``, JSON, Markdown and LaTeX)
SHORT = {SUPPORTED: "supported", DIRECTION_ONLY: "direction only", UNRESOLVED: "unresolved",
         NOT_SUPPORTED: "not supported", REVERSED: "reversed", NOT_RUN: "not run", MISSING: "data missing"}
WIDTH = TABLE_WIDTH  # piped without $COLUMNS (fyexp.run.progress)
ID_WIDTH, VERDICT_WIDTH, N_WIDTH, PROFILE_WIDTH = 31, 14, 8, 11
REDUCED_MARK = "*"
CHECKS_TITLE = "Our checks (not claims of the paper; never counted in its tally)"
THEOREMS_TITLE = "Checks of the paper's theorems (counted apart from its claims)"
TABLE_MARK = " [table reading]"   # a claim read off a table or its caption, not a sentence of the text
SHARED_NOTE = 100  # a note at least this long that two claims share is printed once, numbered, after the table
READING_WORDS = {"text": "paper's text", "authors": "authors' code", "both": "both readings"}


def _wrap(text: str, width: int, first: str = "", rest: str | None = None) -> list[str]:
    """``text`` wrapped to ``width`` columns, never cut (a word longer than a line stays whole on its own)."""
    rest = first if rest is None else rest
    return textwrap.wrap(text, width, initial_indent=first, subsequent_indent=rest, break_long_words=False,
                         break_on_hyphens=False) or [first.rstrip()]


def _profile(v: Verdict) -> str:
    return (v.profile or "—") + (REDUCED_MARK if v.reduced else "")


def _line(v: Verdict, claim_id: str, width: int, id_width: int = ID_WIDTH) -> list[str]:
    """id, verdict, n, profile and ours (without the interval when it does not fit) on one line; what does not
    fit wraps under it, indented."""
    head = f"{claim_id:<{id_width}} {SHORT[v.verdict]:<{VERDICT_WIDTH}} {v.n or '—':<{N_WIDTH}} " \
           f"{_profile(v):<{PROFILE_WIDTH}} "
    return _wrap(head + (v.ours or "—"), width, "", " " * 6)


def _about(v: Verdict) -> str:
    paper = f" · paper: {v.claim.paper_numbers}" if v.claim.paper_numbers else ""
    mark = TABLE_MARK if v.claim.kind == "table_reading" else ""
    return f"{v.claim.place}{mark}: {v.claim.text}{paper}"


class Notes:
    """The notes of a terminal table: a long note shared by several claims (:data:`SHARED_NOTE`) is given a number
    the first time and printed once after the table; a finding is printed in full the first time it explains a
    difference and named afterwards."""

    def __init__(self, verdicts: list[Verdict], findings=()):
        counts = Counter(n for v in verdicts for n in dict.fromkeys(v.notes))
        self.shared = [n for n, k in counts.items() if k > 1 and len(n) >= SHARED_NOTE]
        self.numbers: dict[str, int] = {}
        self.findings = {f.id: f for f in findings}
        self.explained: set[str] = set()

    def text(self, notes: list[str]) -> str:
        out = []
        for note in notes:
            if note in self.shared:
                number = self.numbers.setdefault(note, len(self.numbers) + 1)
                out.append(f"[note {number}]")
            else:
                out.append(note)
        return "; ".join(out)

    def finding(self, ident: str) -> str:
        f = self.findings.get(ident)
        if f is None or ident in self.explained:
            return f"finding {ident}" + (" (above)" if f is not None else "")
        self.explained.add(ident)
        return f"finding {ident}: {' '.join(f.text.split())}"

    def footer(self, width: int) -> list[tuple[str, str]]:
        out = []
        for note, number in self.numbers.items():
            out += [(line, "dim") for line in _wrap(note, width, f"[note {number}] ", " " * 4)]
        return out


def _readings_lines(top: Verdict, width: int, notes: Notes) -> list[tuple[str, str]]:
    """Under a claim a departure touches: each other reading's headline verdict (short), and where the readings
    differ, the findings that explain it."""
    out = []
    for reading, v in top.by_reading.items():
        if v is top:
            continue
        where = f" at {v.profile}{REDUCED_MARK if v.reduced else ''}" if v.profile else ""
        text = f"{READING_WORDS.get(reading, reading)}: {SHORT[v.verdict]}{where}" + (f", {v.ours}" if v.ours else "")
        if v.notes and v.verdict in (NOT_RUN, MISSING):
            text += f"; {notes.text(v.notes)}"
        out += [(line, "") for line in _wrap(text, width, " " * 4, " " * 6)]
    unrun = any(v.verdict == NOT_RUN for v in top.by_reading.values() if v is not top)
    if top.differs() or unrun:   # why: the findings behind the departures (in full once, then by name)
        why = ("readings differ: " if top.differs() else "why: ") + "; ".join(notes.finding(f) for f in top.departures)
        out += [(line, "dim") for line in _wrap(why, width, " " * 4, " " * 6)]
    return out


def _claim_block(mine: list[Verdict], width: int, all_profiles: bool, notes: Notes | None = None,
                 id_width: int = ID_WIDTH) -> list[tuple[str, str]]:
    notes = notes or Notes(mine)
    top = next(v for v in mine if v.headline)
    cid = top.claim.id
    out = []
    if len(cid) > id_width:  # a long id on a line of its own, whole
        out.append((cid, ""))
        cid = ""
    out += [(line, "") for line in _line(top, cid, width, id_width)]
    if top.notes:
        out += [(line, "dim") for line in _wrap(notes.text(top.notes), width, " " * 4)]
    out += _readings_lines(top, width, notes)
    if all_profiles:
        for v in mine:
            if v is not top:
                out += [(line, "dim") for line in _line(v, "  also at", width, id_width)]
                if v.notes:
                    out += [(line, "dim") for line in _wrap(notes.text(v.notes), width, " " * 4)]
    out += [(line, "dim") for line in _wrap(_about(top), width, "  ", " " * 4)]
    return out


def reading_heads(verdicts: list[Verdict], paper: str, reading: str = "text") -> list[Verdict]:
    """The headline verdicts of ``paper``'s tallied claims (:attr:`~fyexp.claims.model.Claim.tallied`) under
    ``reading``: a claim no departure touches reads the same under both."""
    heads = [v for v in verdicts if v.headline and v.claim.paper == paper and v.claim.tallied]
    return [v.by_reading.get(reading, v) for v in heads]


def readings_of(verdicts: list[Verdict], paper: str) -> list[str]:
    """``["text", "authors"]`` where a departure touches a claim of ``paper``, else ``["both"]``."""
    touched = any(v.by_reading for v in verdicts if v.headline and v.claim.paper == paper and v.claim.tallied)
    return ["text", "authors"] if touched else ["both"]


def tally(verdicts: list[Verdict], paper: str, reading: str = "text") -> tuple[int, Counter, int, int, int]:
    """(claims, their headline verdicts under ``reading`` counted, checks, stale rows, dirty rows) of ``paper``: each
    claim once, each stale or dirty row once (among the rows its verdicts read)."""
    mine = [v for v in verdicts if v.claim.paper == paper]
    heads = reading_heads(verdicts, paper, reading)
    checks = len({v.claim.id for v in mine if v.claim.kind == "check"})
    stale = set().union(*[v.stale for v in mine]) if mine else set()
    dirty = set().union(*[v.dirty for v in mine]) if mine else set()
    return len(heads), Counter(v.verdict for v in heads), checks, len(stale), len(dirty)


def profiles_text(heads: list[Verdict]) -> str:
    """At which profiles the judged verdicts among ``heads`` are (``not run`` and ``data missing`` judge nothing),
    spelled out: ``all at paper``, ``12 at paper, 3 at reduced profile claims``; empty when none is judged."""
    where = Counter(f"at {'reduced profile ' if v.reduced else 'variant ' if v.variant else ''}{v.profile}"
                    for v in heads if v.verdict not in (NOT_RUN, MISSING))
    if list(where) == ["at paper"]:
        return "all at paper"
    return ", ".join(f"{n} {w}" for w, n in sorted(where.items(), key=lambda x: (x[0] != "at paper", x[0])))


def counts_text(counts: Counter) -> str:
    return ", ".join(f"{counts[k]} {SHORT[k]}" for k in VERDICTS if counts.get(k)) or "none"


def theorem_text(verdicts: list[Verdict], paper: str) -> str:
    """``5 theorem checks (4 supported, 1 not supported; all at paper)``: the checks of ``paper``'s theorems by their
    headline verdicts, counted apart from its claims (tvem states theorems, not experiments); empty without any."""
    heads = [v for v in verdicts if v.headline and v.claim.paper == paper and v.claim.kind == "theorem_check"]
    if not heads:
        return ""
    where = profiles_text(heads)
    return f"{len(heads)} theorem check{'s' * (len(heads) != 1)} ({counts_text(Counter(v.verdict for v in heads))}" + \
        (f"; {where})" if where else ")")


def summary_line(verdicts: list[Verdict], paper: str) -> str:
    """``tvem: 5 claims (5 supported; all at paper)`` where no departure touches the paper's claims, else
    ``fyvi: 15 claims; paper's text: 5 supported, … (all at paper); authors' code: … (all at paper)``; then the
    checks of the paper's theorems by their verdicts (:func:`theorem_text`), ours apart, and the stale rows."""
    claims, _, checks, stale, dirty = tally(verdicts, paper)
    text = f"{paper}: {claims} claim{'s' * (claims != 1)}"
    readings = readings_of(verdicts, paper)
    if claims and readings == ["both"]:   # no departure: one count, the same under both readings
        heads = reading_heads(verdicts, paper)
        where = profiles_text(heads)
        text += f" ({counts_text(Counter(v.verdict for v in heads))}" + (f"; {where})" if where else ")")
    elif claims:
        for reading in readings:
            heads = reading_heads(verdicts, paper, reading)
            where = profiles_text(heads)
            text += f"; {READING_WORDS[reading]}: {counts_text(Counter(v.verdict for v in heads))}" + \
                (f" ({where})" if where else "")
    tables = sum(1 for v in reading_heads(verdicts, paper) if v.claim.kind == "table_reading")
    text += f", {tables} of them table readings" if tables else ""
    theorems = theorem_text(verdicts, paper)
    text += f"; {theorems}" if theorems else ""
    text += f"; {checks} check{'s' * (checks != 1)} of ours" if checks else ""
    text += f"; {stale} stale row{'s' * (stale != 1)} behind these verdicts" if stale else ""
    return text + (f"; {dirty} dirty" if dirty else "")


def summary_rows(verdicts: list[Verdict], links: dict[str, str] | None = None, titles: dict | None = None) \
        -> list[str]:
    """The Markdown table of the counts, one row per paper and reading (the paper's text and the authors' code
    where a departure touches the paper's claims, else one row for both): claims, each verdict, at which profiles,
    the checks apart; with ``links``, the stale rows and a link to the paper's table.  ``results/README.md`` and
    the README's findings block both print it, and ``fyexp claims``' summary lines give the same counts."""
    extra = ["stale rows", "table"] if links is not None else []
    lines = ["| paper | reading | claims | " + " | ".join(SHORT[k] for k in VERDICTS) + " | profiles | theorem checks "
             "| checks of ours | " + "".join(f"{e} | " for e in extra),
             "|---|---|---:|" + "---:|" * len(VERDICTS) + "---|---:|---:|" + "---|" * len(extra)]
    for paper in PAPERS:
        if not any(v.claim.paper == paper for v in verdicts):
            continue
        claims, _, checks, stale, _ = tally(verdicts, paper)
        theorems = len({v.claim.id for v in verdicts if v.claim.paper == paper and v.claim.kind == "theorem_check"})
        name = (titles or {}).get(paper)
        label = f"{name} (`{paper}`)" if name else f"`{paper}`"
        for reading in readings_of(verdicts, paper):
            heads = reading_heads(verdicts, paper, reading)
            counts = Counter(v.verdict for v in heads)
            tail = [str(stale), f"[md]({links.get(paper, '')})"] if links is not None else []
            lines.append(f"| {label} | {READING_WORDS[reading]} | {claims} | "
                         + " | ".join(str(counts.get(k, 0)) for k in VERDICTS)
                         + f" | {profiles_text(heads) or '—'} | {theorems} | {checks} | "
                         + "".join(f"{t} | " for t in tail))
    return [line.rstrip() for line in lines]


def short_lines(verdicts: list[Verdict], width: int = WIDTH, all_profiles: bool = False, findings=()) \
        -> list[tuple[str, str]]:
    """(line, style) pairs: per claim its headline verdict (id, verdict, n, profile, ours), its notes, the other
    reading's verdict where a departure touches it (and the finding that explains a difference) and, with
    ``all_profiles``, its verdicts at the other profiles, dimmed; the claim with its place and the paper's numbers
    dimmed under it; the checks of the theorems and ours apart; the shared notes once; one summary line per paper.
    Every line wraps at ``width``."""
    id_width = 41 if width >= 120 else ID_WIDTH if width >= 100 else 24   # the longest ids whole at 120
    head = f"{'id':<{id_width}} {'verdict':<{VERDICT_WIDTH}} {'n':<{N_WIDTH}} {'profile':<{PROFILE_WIDTH}} ours"
    out = [(head, "bold")]
    notes = Notes(verdicts, findings)
    ids = list(dict.fromkeys(v.claim.id for v in verdicts))
    by_id = {i: [v for v in verdicts if v.claim.id == i] for i in ids}
    groups = [(None, [i for i in ids if by_id[i][0].claim.tallied]),
              (THEOREMS_TITLE, [i for i in ids if by_id[i][0].claim.kind == "theorem_check"]),
              (CHECKS_TITLE, [i for i in ids if by_id[i][0].claim.kind == "check"])]
    for title, members in groups:
        if title and members:
            out += [("", ""), (title, "bold")]
        for i in members:
            out += _claim_block(by_id[i], width, all_profiles, notes, id_width)
    out += [("", "")] + notes.footer(width)
    for paper in PAPERS:
        if any(v.claim.paper == paper for v in verdicts):
            out += [(line, "") for line in _wrap(summary_line(verdicts, paper), width, "", "  ")]
    if any(v.reduced for v in verdicts if v.headline or all_profiles):
        out += [(line, "dim") for line in _wrap(f"{REDUCED_MARK} a reduced profile: the verdict holds at that "
                                                "profile only, never at the paper's", width, "", "  ")]
    return out


def long_lines(verdicts: list[Verdict], width: int = WIDTH, all_profiles: bool = False, findings=()) \
        -> list[tuple[str, str]]:
    """(line, style) pairs: per headline verdict (every verdict with ``all_profiles``) its id, full verdict, n and
    profile, then the claim, its place, the paper's words, the paper's numbers, ours with the interval, the notes
    and each other reading's verdict (with the findings where they differ), each wrapped to ``width`` and none
    cut."""
    out = []
    shown = [v for v in verdicts if v.headline or all_profiles]
    labels = {"check": "  [our check]", "theorem_check": "  [check of a theorem]", "table_reading": TABLE_MARK}
    by_id = {f.id: f for f in findings}
    for v in sorted(shown, key=lambda v: not v.claim.tallied):  # stable: claims, then checks
        kind = {"reduced": " (reduced profile)", "variant": " (variant)"}.get(v.profile_kind, "")
        title = f"{v.claim.id}  {v.verdict}{kind}  n = {v.n or '—'}  profile {v.profile or '—'}" + \
                ("" if v.headline else "  (not the headline)") + labels.get(v.claim.kind, "")
        out += [(line, "bold") for line in _wrap(title, width, "", "  ")]
        others = [(r, f" {o.verdict} at {o.profile or '—'}" + (f"; {o.ours}" if o.ours else "")   # "authors: …"
                   + "".join(f"; {n}" for n in o.notes)) for r, o in v.by_reading.items() if o is not v]
        why = "; ".join(f"{f}: {' '.join(by_id[f].text.split())}" if f in by_id else f for f in v.departures) \
            if v.differs() else ""
        for name, text in (("claim", v.claim.text), ("where", v.claim.place), ("says", v.claim.quote),
                           ("paper", v.claim.paper_numbers), ("ours", v.ours), ("notes", "; ".join(v.notes)),
                           *others, ("differ", why),
                           ("why" if v.claim.kind == "check" else "caveat", v.claim.note)):
            if text:
                out += [(line, "") for line in _wrap(text, width, f"  {name + ':':<8}", " " * 10)]
        out.append(("", ""))
    for paper in PAPERS:
        if any(v.claim.paper == paper for v in verdicts):
            out += [(line, "") for line in _wrap(summary_line(verdicts, paper), width, "", "  ")]
    return out


def table_lines(verdicts: list[Verdict], width: int, long: bool = False, all_profiles: bool = False,
                findings=()) -> list[tuple[str, str | None]]:
    """The table's ``(text, style)`` lines at ``width``: :func:`short_lines`, or :func:`long_lines` with ``long``;
    ``findings``: the claims file's, printed where they explain a difference of readings."""
    return list((long_lines if long else short_lines)(verdicts, width, all_profiles, findings))


def print_table(verdicts: list[Verdict], console, long: bool = False, all_profiles: bool = False,
                findings=()) -> None:
    """The table on ``console`` (:func:`table_lines`), wrapped at :func:`fyexp.run.progress.table_width`."""
    width = table_width(console)
    print_lines(table_lines(verdicts, width, long, all_profiles, findings), console, width)


def answer(verdicts: list[Verdict], findings, json_out: bool, width: int, long: bool = False,
           all_profiles: bool = False):
    """What ``fyexp claims`` prints: the verdicts as JSON text (``json_out``), else the table's ``(text, style)``
    lines at ``width`` (:func:`table_lines`), whether judged now or kept (:mod:`fyexp.claims.stored`)."""
    return as_json(verdicts) if json_out else table_lines(verdicts, width, long, all_profiles, findings)


def as_json(verdicts: list[Verdict]) -> str:
    return json.dumps([v.as_dict() for v in verdicts], indent=1, ensure_ascii=False)


# ---- files ---------------------------------------------------------------------------------------------------
def _cells(v: Verdict) -> tuple[str, ...]:
    return (v.claim.id, v.claim.text, _quote(v), v.claim.paper_numbers or "—",
            v.ours or "—", v.label + _other_readings(v), v.n or "—", v.profile or "—")


def _quote(v: Verdict) -> str:
    if v.claim.kind == "check":
        return f"{v.claim.note} ({v.claim.where})"
    mark = TABLE_MARK if v.claim.kind == "table_reading" else ""
    return f"“{v.claim.quote}” ({v.claim.place}){mark}"


def _other_readings(v: Verdict) -> str:
    """A headline's verdicts under the other readings, for the files' verdict cell."""
    return "".join(f"; {READING_WORDS.get(r, r)}: {o.verdict}" + (f" at {o.profile}" if o.profile else "")
                   + (f" ({o.ours})" if o.ours else "") for r, o in v.by_reading.items() if o is not v)


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_table(rows: list[Verdict]) -> list[str]:
    return ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)] + \
        ["| " + " | ".join(_md_cell(c) for c in _cells(v)) + " |" for v in rows]


def markdown(paper: str, verdicts: list[Verdict], findings=()) -> str:
    heads = [v for v in verdicts if v.headline]
    claims = [v for v in heads if v.claim.tallied]
    theorems = [v for v in heads if v.claim.kind == "theorem_check"]
    checks = [v for v in heads if v.claim.kind == "check"]
    others = [v for v in verdicts if not v.headline]
    lines = [f"# Claims of `{paper}`", "", "Regenerated by `fyexp report` from the result CSVs and "
             "[`claims.yaml`](../../fyexp/reference/claims.yaml); verdicts: see `fyexp claims --help`.  Each claim "
             "quotes the paper (paper id, section, line of its text) and has one verdict: at the `paper` profile "
             "when it ran, else at the reduced profile `claims` where it ran, else at the reduced profile with the "
             "most rows (labelled).", "",
             f"**{summary_line(verdicts, paper)}.**", ""]
    lines += _md_table(claims)
    if theorems:
        lines += ["", f"## {THEOREMS_TITLE}", ""] + _md_table(theorems)
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
    lines = _tex_table([v for v in heads if v.claim.tallied])
    theorems = [v for v in heads if v.claim.kind == "theorem_check"]
    if theorems:
        lines += ["", "% " + THEOREMS_TITLE, *_tex_table(theorems)]
    checks = [v for v in heads if v.claim.kind == "check"]
    if checks:
        lines += ["", "% " + CHECKS_TITLE, *_tex_table(checks)]
    return "\n".join(lines + [""])


def write_paper_tables(verdicts: list[Verdict], findings, folder: Path) -> dict[str, list[Path]]:
    from fyexp.store.results import atomic_write_text

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
    """Per paper and reading: its claims counted by their headline verdicts, at which profiles, its checks apart,
    the stale rows behind them (each once), with links to its table (:func:`summary_rows`)."""
    return summary_rows(verdicts, links) + [
        "", "Counts are claims, each by its one headline verdict under a reading: at the `paper` profile when it "
        "ran, else at the reduced profile `claims` where it ran, else the reduced profile with the most rows (the "
        "*profiles* column says which); variants (`paper+key=value`), checks of the theorems and our own checks "
        "are never counted among the claims. *Reading*: the paper's text (as fyexp runs the method) and the "
        "authors' code (as it ran the method and produced the published numbers) where a departure "
        "([`readings.yaml`](PKG/fyexp/reference/readings.yaml)) touches a claim of the paper, else both readings "
        "at once. `fyexp claims` and the README's findings block give the same counts. *Stale rows*: rows behind "
        "these verdicts whose code changed since they ran, each counted once."]
