"""Plain text as LaTeX source: the one escaping of every ``.tex`` file fyexp writes (tables, claims).

One pass of :meth:`str.translate`, so a replacement is never escaped again (the backslash of ``\\&`` stays one).
``\\``, ``~`` and ``^`` become commands (a bare ``\\~`` would accent the next character); the few non-ASCII symbols
fyexp prints become LaTeX commands (``\\checkmark`` needs ``amssymb``); any other character stays (UTF-8 input).
"""

from __future__ import annotations

_TABLE = str.maketrans({  # LaTeX's ten special characters, then the symbols
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
    "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "±": r"$\pm$", "σ": r"$\sigma$", "ρ": r"$\rho$",
    "γ": r"$\gamma$", "δ": r"$\delta$", "→": r"$\to$", "✓": r"\checkmark", "✗": r"$\times$", "†": r"\dag{}",
    "—": "--", "′": "'"})


def escape(text: str) -> str:
    """``text`` as LaTeX source that typesets as ``text``."""
    return str(text).translate(_TABLE)
