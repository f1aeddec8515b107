"""scripts/mutate.py: a target's mutmut section replaces the claims' one in a scratch copy only."""

from __future__ import annotations

import importlib.util

import pytest

from tests.conftest import ROOT


def _script():
    spec = importlib.util.spec_from_file_location("mutate", ROOT / "scripts" / "mutate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("target", ["plan", "freshness", "tolerance", "damaged", "coverage", "findings", "tables",
                                    "spec-freshness"])
def test_a_targets_section_replaces_the_claims_section_and_keeps_what_precedes_it(target):
    script = _script()
    setup_cfg = (ROOT / "setup.cfg").read_text(encoding="utf-8")
    assert "only_mutate=fyexp/claims/*" in setup_cfg          # the checkout keeps the claims' configuration
    source, tests = script.TARGETS[target]
    changed = script.with_section(setup_cfg, script.section(target))
    assert changed.count("[mutmut]") == 1 and f"only_mutate={source}\n" in changed
    assert "fyexp/claims" not in changed.split("[mutmut]")[1]
    assert changed.split("[mutmut]")[0] == setup_cfg.split("[mutmut]")[0]
    assert all(f"    {test}\n" in changed for test in tests)
    for path in (source, *tests):                              # a renamed file would leave the rules unmutated
        assert (ROOT / path).is_file(), path


def test_a_setup_cfg_without_a_mutmut_section_gets_one_at_its_end():
    assert _script().with_section("[metadata]\nname = x", "[mutmut]\n") == "[metadata]\nname = x\n[mutmut]\n"


def test_without_mutmut_it_says_so_in_one_line_and_runs_nothing(monkeypatch, capsys, tmp_path):
    script = _script()
    monkeypatch.setattr(script.importlib.util, "find_spec", lambda name: None)
    assert script.main(["plan", "--folder", str(tmp_path / "w")]) == 2
    assert capsys.readouterr().err.startswith("error: mutmut is not installed for ")
    assert not (tmp_path / "w").exists()


def test_only_names_the_mutants_of_a_function_or_a_method():
    script = _script()
    assert script.mutant_patterns("tables", ["table_status", "ComparedTable.counts"]) == [
        "fyexp.report.tables.x_table_status__mutmut_*", "fyexp.report.tables.xǁComparedTableǁcounts__mutmut_*"]
    assert script.mutant_patterns("freshness", []) == []


@pytest.mark.parametrize("target", ["claims-verdicts", "claims-keys", "claims-model", "claims-progress",
                                    "claims-stored"])
def test_a_claims_rules_target_mutates_its_one_file_without_the_slow_tests(target):
    """Issue 46's claims targets mutate one file of fyexp/claims each (setup.cfg's section mutates them all) and
    leave out the tests marked slow (they read the committed results); another target keeps every test."""
    script = _script()
    source, tests = script.TARGETS[target]
    section = script.section(target)
    assert f"only_mutate={source}\n" in section and source.startswith("fyexp/claims/") and "*" not in source
    assert section.endswith("    -q\n    -m\n    not slow\n")
    assert all(f"    {test}\n" in section for test in tests) and all((ROOT / p).is_file() for p in (source, *tests))
    assert "not slow" not in script.section("plan")


def test_tests_given_replace_the_targets_own():
    """``--tests``: the section runs the files given and none of the target's own."""
    script = _script()
    section = script.section("claims-keys", ("tests/claims/test_claims_key_messages.py",))
    selection = section.split("pytest_add_cli_args_test_selection=\n", 1)[1].split("pytest_add_cli_args=", 1)[0]
    assert selection == "    tests/claims/test_claims_key_messages.py\n"
    assert "tests/claims/test_claims_rules.py" in script.section("claims-keys")
