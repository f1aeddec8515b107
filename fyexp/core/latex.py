"""Plain text as LaTeX source: the one escaping used by every ``.tex`` file fyexp writes (tables, claims).

Each character is replaced once, in a single pass (:meth:`str.translate`), so a replacement is never escaped
again (the backslash of ``\\&`` stays one backslash, the braces of ``\\textbackslash{}`` stay braces):

* LaTeX's ten special characters: ``& % $ # _ { }`` get a backslash; ``\\``, ``~`` and ``^`` become
  ``\\textbackslash{}``, ``\\textasciitilde{}`` and ``\\textasciicircum{}`` (a bare ``\\~`` or ``\\^`` would be an
  accent on the next character);
* the few non-ASCII symbols fyexp's tables and claims print (±, σ, ρ, γ, δ, →, ✓, ✗, †, —, ′) as their
  LaTeX commands (``\\checkmark`` needs ``amssymb``); any other character is left as it is (UTF-8 input).
"""

from __future__ import annotations

__all__ = ["escape"]

_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
            "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
_SYMBOLS = {"±": r"$\pm$", "σ": r"$\sigma$", "ρ": r"$\rho$", "γ": r"$\gamma$", "δ": r"$\delta$", "→": r"$\to$",
            "✓": r"\checkmark", "✗": r"$\times$", "†": r"\dag{}", "—": "--", "′": "'"}
_TABLE = str.maketrans({**_SPECIAL, **_SYMBOLS})


def escape(text: str) -> str:
    """``text`` as LaTeX source that typesets as ``text`` (see the module docstring for the replacements)."""
    return str(text).translate(_TABLE)
