"""One claim's verdict as a researcher reads it: the verdict's words, the profile it is at, the interval, and each
reading's headline (:class:`Verdict`), with nothing to import but the claim's dataclass.

The judging is :mod:`fyexp.claims.verdicts`'s; this module is what the rendering (:mod:`fyexp.claims.render`) and
the verdicts kept beside the results (:mod:`fyexp.claims.stored`) need, so that printing kept verdicts imports
neither pandas nor scipy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fyexp.claims.model import Claim

SUPPORTED = "supported"
DIRECTION_ONLY = "supported in direction, not in magnitude"
UNRESOLVED = "not resolved at this n"
NOT_SUPPORTED = "not supported"
REVERSED = "reversed"
NOT_RUN = "not run"
MISSING = "data missing"
VERDICTS = (SUPPORTED, DIRECTION_ONLY, UNRESOLVED, NOT_SUPPORTED, REVERSED, NOT_RUN, MISSING)
PAPER = "paper"


def profile_kind(profile: str | None) -> str:
    """``paper``, ``variant`` (other settings of the paper's: ``paper+lr=1e-4``, ``paper-lr1e-4``,
    ``paper~superseded-…``) or ``reduced`` (any other: ``cpu``, ``quick``)."""
    if profile is None or profile == PAPER:
        return PAPER
    return "variant" if profile.startswith(PAPER) or "+" in profile or "~" in profile else "reduced"


@dataclass
class Verdict:
    claim: Claim
    profile: str | None
    verdict: str
    ours: str = ""
    n: str = ""
    notes: list[str] = field(default_factory=list)
    low: float | None = None
    high: float | None = None
    estimate: float | None = None
    rows_read: int = 0
    stale: frozenset = frozenset()  # keys of the stale rows read (summed once per paper)
    dirty: frozenset = frozenset()
    n_to_resolve: int | None = None
    headline: bool = False
    reading: str = "both"   # the reading judged (fyexp.claims.readings): text, authors, or both (no departure)
    departures: tuple = ()  # the findings (ids) of the departures that touch the claim
    by_reading: dict = field(default_factory=dict)  # on a headline: reading → that reading's headline verdict

    def differs(self) -> bool:
        """The headline verdicts of the readings that have rows differ (only a headline carries them)."""
        return len({v.verdict for v in self.by_reading.values() if v.verdict not in (NOT_RUN, MISSING)}) > 1

    @property
    def profile_kind(self) -> str:
        return profile_kind(self.profile)

    @property
    def reduced(self) -> bool:
        return self.profile_kind == "reduced"

    @property
    def variant(self) -> bool:
        return self.profile_kind == "variant"

    @property
    def label(self) -> str:
        """The verdict as printed: a reduced profile or a variant says so, and so do the notes."""
        text = self.verdict + {"reduced": f" (reduced profile {self.profile})",
                               "variant": f" (variant {self.profile})"}.get(self.profile_kind, "")
        return text + "".join(f"; {n}" for n in self.notes)

    def as_dict(self) -> dict:
        c = self.claim
        return {"id": c.id, "paper": c.paper, "kind": c.kind, "where": c.where, "line": c.line, "quote": c.quote,
                "claim": c.text, "paper_numbers": c.paper_numbers, "profile": self.profile,
                "profile_kind": self.profile_kind, "headline": self.headline, "verdict": self.verdict,
                "reduced": self.reduced, "ours": self.ours, "n": self.n, "estimate": self.estimate, "low": self.low,
                "high": self.high, "n_to_resolve": self.n_to_resolve, "stale_rows": len(self.stale),
                "dirty_rows": len(self.dirty), "notes": self.notes, "reading": self.reading,
                "departures": list(self.departures),
                **({"readings": {r: v.reading_dict() for r, v in self.by_reading.items()},
                    "readings_differ": self.differs()} if self.by_reading else
                   {"readings": {self.reading: self.reading_dict()}, "readings_differ": False} if self.headline
                   else {})}

    def reading_dict(self) -> dict:
        """This verdict as one reading's entry of a headline's ``readings`` (JSON)."""
        return {"verdict": self.verdict, "profile": self.profile, "profile_kind": self.profile_kind,
                "ours": self.ours, "n": self.n, "estimate": self.estimate, "low": self.low, "high": self.high,
                "notes": self.notes}
