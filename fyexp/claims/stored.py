"""The claims' verdicts kept beside the results they were judged from (``results/claims/verdicts.json``).

``fyexp report`` judges every claim as ``fyexp claims`` does (:func:`fyexp.claims.command.verdicts_for`, every
paper, the headline profile) and writes the verdicts here, under the *content key* of what they were judged from
(:func:`content_key`): fyexp's code and reference data and the specs (:func:`fyexp.run.derivation.code_digest`),
Python's, torch's and numpy's versions, and every other file of the results folder by its path and the SHA-256 of
its bytes (the kept answers, :data:`fyexp.run.derivation.KEPT`, left out).  Unlike the user cache's key
(:func:`fyexp.run.derivation.derivation_inputs`, sizes and modification times), the content
key survives a clone: after ``git clone``, ``fyexp claims`` reads the committed verdicts back and prints them in well
under a second, without importing pandas or scipy, instead of judging for a quarter of a minute.

A changed byte of any of those files, another version, a ``--profile``, or a kept file that is damaged or of
another format judges afresh: the kept verdicts are a cache of the judgement, never a second source of it.  A
results folder where the judging warned of anything (a damaged file) keeps none, so that every ``fyexp claims``
says so again.  The file is data: JSON read with the limits of every record (:func:`fyexp.store.damaged.read_json`),
every verdict rebuilt from plain values (no code, no pickle), anything unexpected a miss.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from fyexp.claims.model import Claim, Finding, Selector, Spread
from fyexp.claims.verdict import Verdict
from fyexp.run.derivation import KEPT

STORE = KEPT[0]   # claims/verdicts.json, under the results folder
FORMAT = 1


def store_path(results_dir: Path) -> Path:
    return Path(results_dir) / STORE


def content_key(results_dir: Path, experiments_dir: Path | None) -> str | None:
    """:func:`fyexp.run.derivation.content_key` of the folder for this format: what the verdicts are judged from (module
    docstring); ``None`` where a spec names a runner outside fyexp."""
    from fyexp.run.derivation import content_key as key

    return key(results_dir, experiments_dir, FORMAT)


# ---- verdicts as plain values --------------------------------------------------------------------------------
def _plain(value):
    """A numpy scalar (a verdict's estimate may be one) as the Python number it equals (``json.dumps``'s
    ``default``: called for what JSON cannot hold)."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def _selector_from(d: dict) -> Selector:
    return Selector(**{**d, "params": tuple((k, v) for k, v in d["params"]),
                       "columns": tuple((k, tuple(v)) for k, v in d["columns"])})


def _claim_from(d: dict) -> Claim:
    many = ("others", "series", "group")
    return Claim(**{**d, "sides": {k: _selector_from(s) for k, s in d["sides"].items()},
                    **{k: tuple(_selector_from(s) for s in d[k]) for k in many},
                    "per": tuple(d["per"]), "spread": Spread(**d["spread"]) if d["spread"] else None})


def _finding_from(d: dict) -> Finding:
    return Finding(**{**d, "rows": tuple(_selector_from(s) for s in d["rows"])})


def as_plain(verdicts: list[Verdict], findings: list[Finding]) -> dict:
    """The verdicts (and the claims and findings they print) as JSON values; every verdict a ``by_reading`` names is
    kept once and named by its index (a headline names itself among them)."""
    claims: dict[str, int] = {}
    claim_list: list[dict] = []
    index: dict[int, int] = {}
    order: list[Verdict] = []

    def visit(v: Verdict) -> int:
        if id(v) not in index:
            index[id(v)] = len(order)
            order.append(v)
            for other in v.by_reading.values():
                visit(other)
        return index[id(v)]

    top = [visit(v) for v in verdicts]
    rows = []
    for v in order:
        row = {}
        for f in dataclasses.fields(Verdict):
            value = getattr(v, f.name)
            if f.name == "claim":
                text = json.dumps(dataclasses.asdict(value), default=_plain)
                if text not in claims:
                    claims[text] = len(claim_list)
                    claim_list.append(json.loads(text))
                value = claims[text]
            elif f.name in ("stale", "dirty"):
                value = sorted(list(k) for k in value)
            elif f.name == "by_reading":
                value = {r: index[id(o)] for r, o in value.items()}
            row[f.name] = value
        rows.append(row)
    return {"format": FORMAT, "claims": claim_list, "findings": [dataclasses.asdict(f) for f in findings],
            "verdicts": rows, "top": top}


def from_plain(data: dict) -> tuple[list[Verdict], list[Finding]]:
    """:func:`as_plain`'s inverse (raises ``KeyError``/``TypeError``/``ValueError``/``IndexError`` on another form)."""
    claims = [_claim_from(d) for d in data["claims"]]
    names = {f.name for f in dataclasses.fields(Verdict)}
    built = []
    for row in data["verdicts"]:
        if set(row) != names:   # another verdict form
            raise ValueError
        built.append(Verdict(**{**row, "claim": claims[row["claim"]], "by_reading": {},
                                "stale": frozenset(tuple(k) for k in row["stale"]),
                                "dirty": frozenset(tuple(k) for k in row["dirty"]),
                                "departures": tuple(row["departures"])}))
    for v, row in zip(built, data["verdicts"]):
        v.by_reading = {r: built[i] for r, i in row["by_reading"].items()}
    return [built[i] for i in data["top"]], [_finding_from(d) for d in data["findings"]]


# ---- the file ----------------------------------------------------------------------------------------------------
def write_store(results_dir: Path, experiments_dir: Path | None, verdicts: list[Verdict],
                findings: list[Finding]) -> Path | None:
    """Keep ``verdicts`` (every paper's, at the headline profile) under the folder's content key; the path, or
    ``None`` (and any kept file removed) where no key can be made."""
    from fyexp.store.io import atomic_write_text

    path = store_path(results_dir)
    key = content_key(results_dir, experiments_dir)
    if key is None:
        forget_store(results_dir)
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps({"key": key, **as_plain(verdicts, findings)}, default=_plain,
                                       separators=(",", ":")) + "\n")
    return path


def forget_store(results_dir: Path) -> None:
    path = store_path(results_dir)
    if path.is_file() or path.is_symlink():
        path.unlink()


def read_store(results_dir: Path, experiments_dir: Path | None) -> tuple[list[Verdict], list[Finding]] | None:
    """The kept verdicts and findings, where the file is of this format and its key is the folder's content key
    now; else ``None`` (judge afresh)."""
    from fyexp.store.damaged import read_record_text

    path = store_path(results_dir)
    if not os.path.lexists(path):
        return None
    text, problem = read_record_text(path)   # a regular file, bounded, UTF-8 (never a link, FIFO or device)
    try:
        data = json.loads(text) if problem is None else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    if data.get("key") != content_key(results_dir, experiments_dir):
        return None
    try:
        return from_plain(data)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        return None


def kept_answer(paper: str | None, profile: str | None, json_out: bool, results_dir: Path,
                experiments_dir: Path | None, width: int, long: bool, all_profiles: bool):
    """What ``fyexp claims`` prints (:func:`fyexp.claims.render.answer`) from the kept verdicts, or ``None`` where
    they cannot answer: a ``profile`` asked for (they are the headline profile's), or no current kept file."""
    from fyexp.claims.model import ClaimsFile
    from fyexp.claims.render import answer

    kept = None if profile is not None else read_store(results_dir, experiments_dir)
    if kept is None:
        return None
    verdicts, findings = kept
    findings = ClaimsFile([], findings).for_paper(paper).findings   # an unknown paper: the judging's one line
    mine = verdicts if paper is None else [v for v in verdicts if v.claim.paper == paper]
    return answer(mine, findings, json_out, width, long, all_profiles)


def keep_verdicts(results_dir: Path, experiments_dir: Path | None, judge=None) -> Path | None:
    """Judge every claim as ``fyexp claims`` does and keep the verdicts (:func:`write_store`); ``judge``: a callable
    returning ``(verdicts, findings)`` judged so already (``fyexp report``'s, which judges no claim twice), by
    default :func:`fyexp.claims.command.verdicts_for`'s.  Where the judging warned of anything in this process (a
    damaged file: :mod:`fyexp.store.damaged`), or cannot judge this folder (claims naming experiments it has no spec
    of),
    keep none and remove a kept file.  The path written or ``None``."""
    from fyexp.store import damaged
    from fyexp.core.errors import FyexpError
    from fyexp.run.progress import with_stderr

    if judge is None:
        def judge():
            from fyexp.claims.command import verdicts_for

            claims, verdicts = verdicts_for(results_dir, None, None, experiments_dir)
            return verdicts, claims.findings
    try:
        (verdicts, findings), said = with_stderr(judge)
    except FyexpError:
        forget_store(results_dir)
        return None
    if said or damaged.warned():
        forget_store(results_dir)
        return None
    return write_store(results_dir, experiments_dir, verdicts, findings)
