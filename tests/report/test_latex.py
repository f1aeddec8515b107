"""fyexp.core.latex.escape, the one LaTeX escaping of the report's tables and the claims' files."""

from __future__ import annotations

import pytest

from fyexp.core.latex import escape

SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "_": r"\_", "#": r"\#", "{": r"\{", "}": r"\}",
           "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "$": r"\$"}


@pytest.mark.parametrize("char", list(SPECIAL))
def test_each_special_character_is_escaped_once(char):
    assert escape(f"a{char}b") == f"a{SPECIAL[char]}b"


def test_a_replacement_is_never_escaped_again():
    """One pass: the braces a backslash turns into, and the backslash of ``\\&``, stay as they are written."""
    assert escape("\\&") == r"\textbackslash{}\&"
    assert escape("{\\}") == r"\{\textbackslash{}\}"
    assert escape("x^{2}_i ~ 50% $5 #1") == r"x\textasciicircum{}\{2\}\_i \textasciitilde{} 50\% \$5 \#1"
    assert escape(r"\mathcal{L}") == r"\textbackslash{}mathcal\{L\}"


def test_symbols_become_commands_and_other_text_is_unchanged():
    assert escape("0.9 ± 0.1 ✓ ✗† σ→ρ γ δ — x′") == (r"0.9 $\pm$ 0.1 \checkmark $\times$\dag{} $\sigma$$\to$$\rho$ "
                                                       r"$\gamma$ $\delta$ -- x'")
    assert escape("Lücke, plain words 12.3 (a|b) \"q\"") == "Lücke, plain words 12.3 (a|b) \"q\""


def test_the_claims_file_escapes_a_backslash(tmp_path):
    """The claims' LaTeX once escaped braces but not backslashes: ``\\mathcal{L}`` became ``\\mathcal\\{L\\}``."""
    import pandas as pd

    from fyexp.claims.render import latex
    from fyexp.claims.verdicts import judge_all
    from tests.claims.test_claims_rules import BASE, JITTER, PAIR, claim_of, frames

    claim = claim_of(tmp_path, PAIR.format(d="greater") + "    paper_numbers: '\\mathcal{L}^h 50% & x_1'\n")
    data = {"gmm-clustering": pd.concat([frames({"x": BASE + 1 + JITTER, "y": BASE}, "paper")["gmm-clustering"]])}
    text = latex("fyvi", judge_all([claim], data))
    assert r"\textbackslash{}mathcal\{L\}\textasciicircum{}h 50\% \& x\_1" in text


def test_the_report_table_escapes_its_caption_and_cells():
    from fyexp.report.tables import compare, to_latex
    from tests.report.test_report_tolerance import FYVI_T1, _summary

    table = compare(_summary([(r, m, v, 0.01, 5) for (r, m), v in FYVI_T1.items()]), "fyvi", "1", "paper",
                    planned_seeds=5)
    text = to_latex(table, "a\\b {c}")
    assert r"\caption{a\textbackslash{}b \{c\} (profile paper; reproduced)}" in text
    assert r"\checkmark" in text and r"$\pm$" in text and "✓" not in text and "±" not in text
    assert r"silhouette\_score" in text
