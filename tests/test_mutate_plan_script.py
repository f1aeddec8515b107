"""scripts/mutate_plan.py: the plan's mutmut section replaces the claims' one in a scratch copy only."""

from __future__ import annotations

import importlib.util

from tests.conftest import ROOT


def _script():
    spec = importlib.util.spec_from_file_location("mutate_plan", ROOT / "scripts" / "mutate_plan.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_plan_section_replaces_the_claims_section_and_keeps_what_precedes_it():
    script = _script()
    setup_cfg = (ROOT / "setup.cfg").read_text(encoding="utf-8")
    assert "only_mutate=fyexp/claims/*" in setup_cfg          # the checkout keeps the claims' configuration
    changed = script.with_section(setup_cfg, script.plan_section())
    assert changed.count("[mutmut]") == 1 and "only_mutate=fyexp/plan.py" in changed
    assert "fyexp/claims" not in changed.split("[mutmut]")[1]
    assert changed.split("[mutmut]")[0] == setup_cfg.split("[mutmut]")[0]
    assert script.with_section("[metadata]\nname = x", "[mutmut]\n") == "[metadata]\nname = x\n[mutmut]\n"
    for test in script.TESTS:                                  # a renamed test file would leave the rules unmutated
        assert (ROOT / test).is_file(), test
