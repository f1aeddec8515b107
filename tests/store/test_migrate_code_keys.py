"""scripts/migrate_code_keys.py: run records carried across a behaviour-preserving move, on planted trees (issue 48:
a package move must not read as changed code, nor re-sign what was already stale)."""

from __future__ import annotations

import importlib.util
import json

import pytest

from tests.conftest import ROOT

_found = importlib.util.spec_from_file_location("migrate_code_keys", ROOT / "scripts" / "migrate_code_keys.py")
migrate = importlib.util.module_from_spec(_found)
_found.loader.exec_module(migrate)

PLAN = "import os\n\n\ndef estimate(x):\n    return x * 2\n"
USER_BEFORE = "from fyexp.plan import estimate\n\n\ndef run(x):\n    return estimate(x) + 1\n"
USER_AFTER = "from fyexp.run.plan import estimate\n\n\ndef run(x):\n    return estimate(x) + 1\n"


def _tree(root, files):
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.fixture
def trees(tmp_path):
    before = _tree(tmp_path / "before", {"fyexp/plan.py": PLAN, "fyexp/user.py": USER_BEFORE})
    after = _tree(tmp_path / "after", {"fyexp/run/plan.py": PLAN, "fyexp/user.py": USER_AFTER})
    return before, after


def _hashes(root, keys):
    from fyexp.store.provenance.executed import function_hashes

    return function_hashes(keys, root, {})


def test_keys_move_with_their_file_or_folder_the_longest_move_first():
    moves = migrate.parse_moves(["fyexp/plan.py=fyexp/run/plan.py", "fyexp/lease=gpu_kit", "fyexp/lease/x.py=y.py"])
    assert migrate.mapped_key("fyexp/plan.py:estimate", moves) == "fyexp/run/plan.py:estimate"
    assert migrate.mapped_key("fyexp/lease/queue.py:Unit.cells", moves) == "gpu_kit/queue.py:Unit.cells"
    assert migrate.mapped_key("fyexp/lease/x.py:<module>", moves) == "y.py:<module>"
    assert migrate.mapped_key("fyexp/planner.py:f", moves) == "fyexp/planner.py:f"   # a prefix is no folder
    with pytest.raises(SystemExit):
        migrate.parse_moves(["fyexp/plan.py"])


def test_a_current_entry_takes_heads_hash_and_a_stale_one_stays_stale(trees):
    before, after = trees
    moves = {"fyexp/plan.py": "fyexp/run/plan.py"}
    keys = ["fyexp/plan.py:estimate", "fyexp/plan.py:<module>", "fyexp/user.py:run", "fyexp/user.py:<module>"]
    current = _hashes(before, keys)
    stale = {**current, "fyexp/user.py:run": "0123456789ab"}        # the function changed since its cell ran
    code, counts, problems = migrate.carried(stale, lambda k: _hashes(before, k), lambda k: _hashes(after, k), moves)
    now = _hashes(after, ["fyexp/run/plan.py:estimate", "fyexp/user.py:run"])
    assert problems == [] and code["fyexp/run/plan.py:estimate"] == current["fyexp/plan.py:estimate"]   # moved alone
    assert code["fyexp/user.py:<module>"] == now["fyexp/user.py:<module>"] != current["fyexp/user.py:<module>"]
    assert code["fyexp/user.py:run"] == "0123456789ab"                 # stale before: never re-signed
    assert counts == {"renamed": 2, "current": 3, "resigned": 1, "stale": 1}
    # every carried entry but the stale one is current at the new tree
    assert {k: v for k, v in _hashes(after, sorted(code)).items() if code.get(k) != v} == \
        {"fyexp/user.py:run": now["fyexp/user.py:run"]}


def test_a_renamed_function_moves_alone_and_a_folded_one_is_dropped_only_where_current(tmp_path):
    before = _tree(tmp_path / "before", {"fyexp/p.py": "def line(x):\n    return x\n\n\ndef _print(x):\n"
                                                       "    return line(x)\n\n\ndef note(x):\n    return _print(x)\n"})
    after = _tree(tmp_path / "after", {"fyexp/p.py": "def say(x):\n    return x\n\n\n"
                                                     "def note(x):\n    return say(x)\n"})
    moves = migrate.parse_moves(["fyexp/p.py:line=fyexp/p.py:say"])
    assert migrate.mapped_key("fyexp/p.py:line", moves) == "fyexp/p.py:say"
    assert migrate.mapped_key("fyexp/p.py:note", moves) == "fyexp/p.py:note"      # a key move moves no file
    keys = ["fyexp/p.py:line", "fyexp/p.py:_print", "fyexp/p.py:note"]
    current = _hashes(before, keys)
    old, new = (lambda k: _hashes(before, k)), (lambda k: _hashes(after, k))
    folded = frozenset({"fyexp/p.py:_print"})
    code, counts, problems = migrate.carried(current, old, new, moves, folded)
    assert problems == [] and sorted(code) == ["fyexp/p.py:<module>", "fyexp/p.py:note", "fyexp/p.py:say"]
    assert code == _hashes(after, ["fyexp/p.py:note", "fyexp/p.py:say"])          # all current at the new tree
    assert counts == {"renamed": 1, "current": 4, "resigned": 3, "stale": 0}      # say, note (new bodies), _print
    # a stale entry of a folded function stays (its record stays stale); without --folded it is a problem
    stale = {**current, "fyexp/p.py:_print": "0123456789ab"}
    code, counts, problems = migrate.carried(stale, old, new, moves, folded)
    assert problems == [] and code["fyexp/p.py:_print"] == "0123456789ab" and counts["stale"] == 1
    assert migrate.carried(current, old, new, moves)[2] == \
        ["fyexp/p.py:_print (→ fyexp/p.py:_print): current before, gone at HEAD"]
    # naming a function HEAD still has as folded is a problem, not a silent drop
    assert migrate.carried(current, old, new, moves, folded | {"fyexp/p.py:note"})[2] == \
        ["fyexp/p.py:note: named as folded, but HEAD still has it"]


def test_a_move_left_out_is_a_problem_and_nothing_is_written(trees, tmp_path):
    before, after = trees
    keys = ["fyexp/plan.py:estimate", "fyexp/user.py:run"]
    record = {"code": _hashes(before, keys), "commit": "abc", "fingerprint": None, "settings": {}}
    cell = tmp_path / "results" / "e" / "cells" / "paper" / "c.record.json"
    cell.parent.mkdir(parents=True)
    text = json.dumps(record, indent=1, sort_keys=True) + "\n"
    cell.write_text(text)
    totals, problems = migrate.carry_records(tmp_path / "results", before, after, {})
    gone = [p.rsplit(": ", 2)[1].split(" ")[0] for p in problems]
    assert gone == ["fyexp/plan.py:<module>", "fyexp/plan.py:estimate"]
    assert cell.read_text() == text                                    # its <module> entry is gone too
    totals, problems = migrate.carry_records(tmp_path / "results", before, after,
                                             {"fyexp/plan.py": "fyexp/run/plan.py"}, dry_run=True)
    assert problems == [] and totals["rewritten"] == 1 and cell.read_text() == text
    migrate.carry_records(tmp_path / "results", before, after, {"fyexp/plan.py": "fyexp/run/plan.py"})
    written = json.loads(cell.read_text())
    assert set(written["code"]) >= {"fyexp/run/plan.py:estimate", "fyexp/user.py:run"}
    assert {k: written[k] for k in ("commit", "fingerprint", "settings")} == {"commit": "abc", "fingerprint": None,
                                                                             "settings": {}}
