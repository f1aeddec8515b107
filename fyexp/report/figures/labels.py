"""The words of figure titles: which profile (or variant) a figure shows and the papers'
notation as matplotlib mathtext (``L_10^-5`` → :math:`L_{10^{-5}}`).

Every figure of a profile names it in its title (``[paper]``, ``[paper+n_iter=50]``), so a variant never reads as
the profile it derives from.  The notation helpers write mathtext (``$...$``), which matplotlib renders without
LaTeX.
"""

from __future__ import annotations

import re


def profile_tag(profile: object) -> str:
    """``[paper]``, ``[paper+n_iter=50]``: the profile a figure's rows come from, as its title says it."""
    return f"[{profile}]"


def _power(text: str) -> str:
    """An index in mathtext: ``10^-5`` → ``10^{-5}``, ``2^10`` → ``2^{10}``; any other text as it is."""
    return re.sub(r"(\d+)\^([-+]?\d+)", r"\1^{\2}", text)


_SYMBOL = {"beta": r"\beta", "h": "h", "bh": "bh", "bh-alt": r"bh\,alt"}
# L, an optional superscript (^h, ^beta, ^bh-alt), a subscript: a number, optionally a power (L_10^-5, L^h_0.9)
_OBJECTIVE = re.compile(r"\bL(?:\^([A-Za-z]+(?:-alt)?))?_(\d+(?:\.\d+)?(?:\^[-+]?\d+)?)")
_STATES = re.compile(r"\|K\|\s*=\s*(\d+(?:\^\d+)?)")


def math_notation(text: str) -> str:
    """The papers' notation in ``text`` as matplotlib mathtext: ``L_10^-5`` → ``$L_{10^{-5}}$``, ``L^h_0.9`` →
    ``$L^{h}_{0.9}$``, ``L^beta_10^3`` → ``$L^{\\beta}_{10^{3}}$``, ``|K|=2^10`` → ``$|\\mathcal{K}| = 2^{10}$``;
    the rest as it is."""
    def objective(match: re.Match) -> str:
        sup, sub = match.groups()
        upper = f"^{{{_SYMBOL.get(sup, sup)}}}" if sup else ""
        return f"$L{upper}_{{{_power(sub)}}}$"

    text = _OBJECTIVE.sub(objective, text)
    return _STATES.sub(lambda m: f"$|\\mathcal{{K}}| = {_power(m.group(1))}$", text)


__all__ = ["profile_tag", "count", "math_notation"]
