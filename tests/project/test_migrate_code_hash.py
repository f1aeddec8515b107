"""scripts/migrate_drop_code_hash.py: the retired ``code_hash`` column leaves a CSV, every other byte stays."""

from __future__ import annotations

import importlib.util

from tests.conftest import ROOT

_found = importlib.util.spec_from_file_location("migrate_drop_code_hash",
                                                ROOT / "scripts" / "migrate_drop_code_hash.py")
migrate = importlib.util.module_from_spec(_found)
_found.loader.exec_module(migrate)

BEFORE = ('experiment,params,value,code_hash,settings_hash\n'
          'x,"{""a"": 1, ""b"": 2}",1.5,0000000000e1,34e404522701\n'
          'x,"{}",,,\n')
AFTER = ('experiment,params,value,settings_hash\n'
         'x,"{""a"": 1, ""b"": 2}",1.5,34e404522701\n'
         'x,{},,\n')


def test_the_column_goes_and_the_rest_reads_back_the_same():
    assert migrate.without_column(BEFORE) == AFTER     # "{}" needs no quotes: the csv module's minimal quoting
    assert migrate.round_trips(BEFORE, AFTER)
    assert not migrate.round_trips(BEFORE, AFTER.replace("1.5", "1.50"))
    assert migrate.without_column(AFTER) is None and migrate.without_column("") is None


def test_the_script_rewrites_once_and_leaves_other_files(tmp_path, capsys):
    cells = tmp_path / "exp" / "cells" / "paper"
    cells.mkdir(parents=True)
    (cells / "a.csv").write_text(BEFORE)
    (cells / "b.csv").write_text(AFTER)
    assert migrate.main([str(tmp_path), "--dry-run"]) == 0 and (cells / "a.csv").read_text() == BEFORE
    assert migrate.main([str(tmp_path)]) == 0
    assert (cells / "a.csv").read_text() == AFTER and (cells / "b.csv").read_text() == AFTER
    assert migrate.main([str(tmp_path)]) == 0
    assert "from 1 CSV files" in capsys.readouterr().out.splitlines()[1]
