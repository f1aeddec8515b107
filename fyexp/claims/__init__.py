"""Each paper's claims as data (``fyexp/reference/claims.yaml``) and their verdicts against the result CSVs.

:mod:`fyexp.claims.keys` declares each key of the claims file (type and domain, :mod:`fyexp.constraints`) and
reads it; :mod:`fyexp.claims.model` loads the claims and findings and checks what they name;
:mod:`fyexp.claims.stats` computes the intervals; :mod:`fyexp.claims.verdicts` judges every claim at every
profile that has its rows; :mod:`fyexp.claims.render` writes the table (terminal, Markdown, LaTeX, JSON).
"""

from fyexp.claims.model import Claim, Finding, Selector, load_claims
from fyexp.claims.verdicts import Verdict, judge_all

__all__ = ["Claim", "Finding", "Selector", "Verdict", "judge_all", "load_claims"]
