"""Each paper's claims as data (``fyexp/reference/claims.yaml``) and their verdicts against the result CSVs.

:mod:`fyexp.claims.keys` declares each key of the claims file (type and domain, :mod:`fyexp.core.constraints`) and
reads it; :mod:`fyexp.claims.model` loads the claims and findings and checks what they name;
:mod:`fyexp.claims.stats` computes the intervals; :mod:`fyexp.claims.verdicts` judges every claim at every
profile that has its rows (:mod:`fyexp.claims.verdict`: one verdict, light to import);
:mod:`fyexp.claims.render` writes the table (terminal, Markdown, LaTeX, JSON); :mod:`fyexp.claims.stored` keeps
the verdicts beside the results they were judged from.

The names below are imported when first used (PEP 562), so that reading kept verdicts imports no pandas.
"""

import importlib

_WHERE = {"Claim": "model", "Finding": "model", "Selector": "model", "load_claims": "model",
          "Verdict": "verdict", "judge_all": "verdicts"}

__all__ = ["Claim", "Finding", "Selector", "Verdict", "judge_all", "load_claims"]


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module 'fyexp.claims' has no attribute '{name}'")
    return getattr(importlib.import_module(f"fyexp.claims.{_WHERE[name]}"), name)
