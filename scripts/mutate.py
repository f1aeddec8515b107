"""Mutation testing of a set of fyexp's rules besides the claims: TARGET names the file mutated and the in-process
tests that reach it (``TARGETS`` below; docs/contributing/mutation.md says what each set of rules decides and records each run).

``setup.cfg``'s ``[mutmut]`` section is the claims' configuration (``fyexp/claims/MUTATION.md``), and mutmut reads
only one; changing it would reset the claims' cached results.  So this script copies the committed tree
(``git worktree``, detached at HEAD) to a scratch folder, writes the target's section there and runs mutmut in it::

    nice -n 5 python scripts/mutate.py plan                # folder .mutate-plan/ (git-ignored), 2 workers
    python scripts/mutate.py freshness --results-only      # the survivors of the last run, without running

mutmut 3.8.1 (``pip install mutmut==3.8.1``, not a dependency of fyexp).  Per mutant only the in-process tests that
reach the mutated function run; the installed-script tests of the selection run ``fyexp`` in a subprocess, which
never sees a mutant.  ``results/`` is copied too: the plan reads the checkout's committed times, the freshness tests
the committed fingerprints; the README with the pages it links (the findings' tests read its block); ``scripts/``
(a settings test runs one in a subprocess).
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the in-process tests of the claims' rules (issue 46's directions, selectors and per-run statements)
CLAIMS_RULE_TESTS = ("tests/claims/test_claims.py", "tests/claims/test_claims_columns.py",
                     "tests/claims/test_claims_sentence_rules.py",
                     "tests/claims/test_claims_rules.py", "tests/claims/test_claims_mutation_gaps.py",
                     "tests/claims/test_claims_mutation_edges.py", "tests/claims/test_claims_progress.py",
                     "tests/claims/test_claims_key_messages.py")
#: target -> (the file mutated, the in-process tests that reach it)
TARGETS = {
    "plan": ("fyexp/run/plan.py", ("tests/run/test_plan.py", "tests/run/test_plan_start.py",
                               "tests/run/test_list_show.py",
                               "tests/run/test_memory_estimate.py", "tests/run/test_plan_scaled.py")),
    "estimate": ("fyexp/run/estimate.py", ("tests/run/test_plan.py", "tests/run/test_plan_scaled.py",
                                           "tests/run/test_list_show.py", "tests/run/test_speed.py")),
    # the work each runner declares for the scaled estimate (run with --only cell_work)
    "work-vr": ("fyexp/experiments/vr_vae_config.py", ("tests/run/test_plan_scaled.py",)),
    "work-frac": ("fyexp/experiments/frac_vae_config.py", ("tests/run/test_plan_scaled.py",)),
    "freshness": ("fyexp/store/provenance/freshness.py", ("tests/store/test_provenance.py",
                                                    "tests/store/test_records.py",
                                                    "tests/report/test_report_stale_reasons.py",
                                                    "tests/store/test_executed.py",
                                                    "tests/run/test_fingerprints.py",
                                                    "tests/store/test_freshness_rules.py")),
    "tolerance": ("fyexp/report/tolerance.py", ("tests/report/test_report_tolerance.py",
                                                "tests/report/test_tolerance_rules.py",
                                                "tests/report/test_scoring.py",
                                                "tests/report/test_reference_rows.py", "tests/report/test_latex.py")),
    "damaged": ("fyexp/store/damaged.py", ("tests/store/test_damaged_records.py",
                                     "tests/store/test_damaged_rules.py",
                                     "tests/store/test_records.py", "tests/store/test_results_store.py",
                                     "tests/store/test_user_cache.py")),
    "coverage": ("fyexp/report/coverage.py", ("tests/report/test_coverage.py", "tests/report/test_coverage_rules.py",
                                              "tests/report/test_report_index.py",
                                              "tests/report/test_reference_rows.py", "tests/report/test_scoring.py")),
    "findings": ("fyexp/report/findings.py", ("tests/project/test_readme.py", "tests/report/test_findings_rules.py",
                                              "tests/claims/test_claims.py",
                                              "tests/report/test_report_index.py")),
    "tables": ("fyexp/report/tables.py", ("tests/report/test_report_tolerance.py",
                                          "tests/report/test_tolerance_rules.py",
                                          "tests/report/test_scoring.py", "tests/report/test_coverage.py",
                                          "tests/report/test_coverage_rules.py", "tests/report/test_report_index.py",
                                          "tests/report/test_latex.py", "tests/report/test_reference_rows.py",
                                          "tests/report/test_report_stale_reasons.py",
                                          "tests/report/test_tables_rules.py")),
    "spec-freshness": ("fyexp/run/spec_freshness.py", ("tests/store/test_provenance.py",
                                                   "tests/spec/test_settings.py",
                                                   "tests/report/test_report_stale_reasons.py",
                                                   "tests/claims/test_claims_rules.py",
                                                   "tests/run/test_spec_freshness_rules.py")),
    # issue 46's rules of the claims, one file each, run with --only on the new functions (the whole package is
    # setup.cfg's section, fyexp/claims/MUTATION.md); the tests on the committed results (slow) are left out
    "claims-verdicts": ("fyexp/claims/verdicts.py", CLAIMS_RULE_TESTS),
    "claims-keys": ("fyexp/claims/keys.py", CLAIMS_RULE_TESTS),
    "claims-model": ("fyexp/claims/model.py", CLAIMS_RULE_TESTS),
    "claims-progress": ("fyexp/claims/progress.py", CLAIMS_RULE_TESTS),
    # the verdicts kept beside the results: their file form and content key
    "claims-stored": ("fyexp/claims/stored.py", ("tests/claims/test_claims_stored.py",)),
}
SECTION = """[mutmut]
source_paths=fyexp
only_mutate={source}
also_copy=
    experiments
    results
    scripts
    README.md
    docs
    uv.lock
pytest_add_cli_args_test_selection=
{tests}
pytest_add_cli_args=
    -p
    no:cacheprovider
    -q
"""


def section(target: str, tests: tuple[str, ...] = ()) -> str:
    """The ``[mutmut]`` section of ``target``'s run (a ``claims-`` target without the slow tests, which read the
    committed results: a minute a mutant on a loaded machine); ``tests``: these instead of the target's own."""
    source, own = TARGETS[target]
    tests = tests or own
    text = SECTION.format(source=source, tests="\n".join(f"    {t}" for t in tests))
    return text + "    -m\n    not slow\n" if target.startswith("claims-") else text


def with_section(setup_cfg: str, section: str) -> str:
    """``setup_cfg`` with its ``[mutmut]`` section (to the end of the file: it is the last) replaced by ``section``."""
    start = setup_cfg.find("[mutmut]")
    return (setup_cfg[:start] if start >= 0 else setup_cfg.rstrip("\n") + "\n") + section


def prepare(folder: Path, target: str, tests: tuple[str, ...] = ()) -> None:
    """A detached worktree of HEAD in ``folder`` (made once, then moved to HEAD), with ``target``'s section."""
    if not (folder / ".git").exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--force", str(folder), "HEAD"],
                       check=True)
    else:
        subprocess.run(["git", "-C", str(folder), "checkout", "--quiet", "--detach", "--force",
                        subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], check=True,
                                       capture_output=True, text=True).stdout.strip()], check=True)
    cfg = folder / "setup.cfg"
    cfg.write_text(with_section(cfg.read_text(encoding="utf-8"), section(target, tests)), encoding="utf-8")


def mutant_patterns(target: str, functions: list[str]) -> list[str]:
    """mutmut's names (fnmatch patterns) of the mutants of ``functions`` of ``target``'s file: ``f`` for a function,
    ``Class.method`` for a method (mutmut names them ``<module>.x_<f>__mutmut_<n>`` and
    ``<module>.xǁ<Class>ǁ<method>__mutmut_<n>``)."""
    module = TARGETS[target][0].removesuffix(".py").replace("/", ".")
    return [f"{module}.x{'ǁ' + f.replace('.', 'ǁ') if '.' in f else '_' + f}__mutmut_*" for f in functions]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", choices=sorted(TARGETS), help="the rules to mutate")
    parser.add_argument("--folder", type=Path, default=None,
                        help="the scratch worktree (default: .mutate-TARGET/ in the checkout, git-ignored)")
    parser.add_argument("--jobs", type=int, default=2, help="mutants run at once (mutmut --max-children)")
    parser.add_argument("--results-only", action="store_true", help="list the last run's survivors, run nothing")
    parser.add_argument("--keep-cache", action="store_true",
                        help="keep mutmut's results of the last run (default: start from none; mutmut keeps a "
                             "survivor's result when only the tests changed, so a new test would not be seen)")
    parser.add_argument("--only", action="append", default=[], metavar="FUNCTION",
                        help="mutate only this function of the file (Class.method for a method); repeat for more")
    parser.add_argument("--tests", action="append", default=[], metavar="FILE",
                        help="run these test files instead of the target's own (repeat for more): the mutants one "
                             "new test file kills, in minutes rather than the hours of the whole selection")
    args = parser.parse_args(argv)
    if importlib.util.find_spec("mutmut") is None:
        print(f"error: mutmut is not installed for {sys.executable} (pip install mutmut==3.8.1)", file=sys.stderr)
        return 2
    folder = args.folder or ROOT / f".mutate-{args.target}"
    mutmut = [sys.executable, "-m", "mutmut"]
    if not args.results_only:
        prepare(folder, args.target, tuple(args.tests))
        if not args.keep_cache:
            shutil.rmtree(folder / "mutants", ignore_errors=True)
        subprocess.run([*mutmut, "run", "--max-children", str(args.jobs), *mutant_patterns(args.target, args.only)],
                       cwd=folder, check=False)
    return subprocess.run([*mutmut, "results"], cwd=folder, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
