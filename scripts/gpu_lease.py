#!/usr/bin/env python3
"""Turn a short GPU allocation into finished ``paper`` cells (docs/contributing/gpu-lease.md).

    python scripts/gpu_lease.py pack [--dry-run]            # here: the queue's missing cells + their data → .gl/
    python3 scripts/gpu_lease.py run --budget-s 540         # on the device (carry .gl): run, stop, pack into $OUT
    python scripts/gpu_lease.py merge FOLDER                # here: the returned cells → results/, checkpoints → .gl/state

``collect`` (what ``run`` ends with) packs a scratch results folder into a folder; ``worker`` is ``run``'s own
subprocess for one unit.  Every error is one line and exit status 2.

The budget hook lives here, outside the ``fyexp`` package, on purpose: a cell records the fyexp functions it
executed (``fyexp/store/provenance/executed.py``), and the wrapper below must not become one of them.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # on the device fyexp is not installed: it runs from the shipped tree
    sys.path.insert(0, str(ROOT))

MiB = 2 ** 20
CODE_PATHS = ("fyexp", "experiments", "pyproject.toml")   # what a cell's numbers can depend on (provenance.py)


# --------------------------------------------------------------------------------------------------- the budget
@contextlib.contextmanager
def budget(deadline: float, clock=time.time):
    """Within the block, the Trainer and the ensemble raise :class:`BudgetSpent` at the start of an epoch (every
    checkpoint of the previous one written) once ``clock()`` has passed ``deadline``."""
    import fyexp.train.ensemble as ensemble
    import fyexp.train.trainer as trainer
    from gpu_kit.device import BudgetSpent

    originals = {module: module.apply_schedule for module in (trainer, ensemble)}

    def wrap(original):
        def apply_schedule(optimizers, factor):
            if clock() > deadline:
                raise BudgetSpent(f"the job's budget ran out at {time.strftime('%H:%M:%S')}")
            return original(optimizers, factor)
        return apply_schedule

    for module, original in originals.items():
        module.apply_schedule = wrap(original)
    try:
        yield
    finally:
        for module, original in originals.items():
            module.apply_schedule = original


# --------------------------------------------------------------------------------------------------- helpers
def code_digest(root: Path = ROOT) -> str:
    """SHA-256 over the files of :data:`CODE_PATHS` (bytecode caches aside): the same on both machines when the
    shipped code is the packed code."""
    h = hashlib.sha256()
    for top in CODE_PATHS:
        base = root / top
        files = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file())
        for path in files:
            rel = path.relative_to(root).as_posix()
            if "__pycache__" in rel or rel.endswith(".pyc") or ".egg-info" in rel:
                continue
            h.update(rel.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()[:16]


def travelling_bytes(root: Path = ROOT) -> int | None:
    """Bytes of what the device tool ships besides carried paths: tracked and untracked-not-ignored files."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                             capture_output=True, timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    paths = {root / p for p in out.decode().split("\0") if p}
    return sum(p.stat().st_size for p in paths if p.is_file())


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else 0


def vendor(names: list[str], site: Path) -> list[str]:
    """Copy pure-Python packages installed here into ``site`` (they travel; the device may lack them)."""
    import importlib.util

    from fyexp.core.errors import FyexpError

    shutil.rmtree(site, ignore_errors=True)
    copied = []
    for name in names:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise FyexpError(f"pack --vendor {name}: no installed package '{name}' here to copy")
        source = Path(next(iter(spec.submodule_search_locations)))
        if any(source.rglob("*.so")):
            raise FyexpError(f"pack --vendor {name}: {source} holds compiled extensions; only pure-Python packages "
                             f"can travel this way")
        shutil.copytree(source, site / name, ignore=shutil.ignore_patterns("__pycache__"))
        copied.append(name)
    return copied


def _entries(args):
    from fyexp.run.cell_filter import parse_only
    from gpu_kit.queue import PAPER_QUEUE, QueueEntry
    from fyexp.spec.specs import parse_seeds

    if args.experiment is None:
        if args.only or args.seeds or args.set:
            from fyexp.core.errors import FyexpError

            raise FyexpError("pack: --only, --seeds and --set go with --experiment NAME (without it the paper queue is "
                             "packed)")
        return list(PAPER_QUEUE), None
    seeds = parse_seeds(args.seeds)
    entry = QueueEntry(f"{args.experiment} [{args.profile}]", args.experiment, args.profile,
                       seeds=tuple(seeds) if seeds is not None else None, sets=tuple(args.set or ()))
    return [entry], parse_only(args.only)


def _assumptions(args):
    from gpu_kit.estimate import Assumptions

    return Assumptions(speedup=args.speedup, ensemble_cost=args.ensemble_cost, jobs=args.jobs,
                       concurrency_gain=args.concurrency_gain, jobs_per_allocation=args.jobs_per_allocation,
                       budget_s=args.budget_s)


# --------------------------------------------------------------------------------------------------- pack
def _room(args, lease: Path) -> tuple[int, int | None, int]:
    """``(bytes left for data, bytes of the tree, bytes besides data)``: the checkpoints that come back replace
    ``state/``, so room is kept for the larger of the two; a MiB of margin (the manifest, rounding)."""
    tree = travelling_bytes()
    fixed = (tree or 0) + folder_bytes(lease / "site") + max(folder_bytes(lease / "state"), args.reserve_mib * MiB)
    return int((args.max_mib - 1) * MiB - fixed), tree, int(fixed)


def room_statement(room: int, tree: int | None, args, lease: Path) -> str:
    """One line: what the data may take, and what takes the rest of ``--max-mib`` (the tree, the checkpoint
    reserve, vendored packages), so that units left for a later pack explain themselves."""
    reserve = max(args.reserve_mib * MiB, folder_bytes(lease / "state"))
    tree_text = "unknown: not a git checkout" if tree is None else f"{tree / MiB:.1f} MiB"
    return (f"Room for data: {max(room, 0) / MiB:.1f} of {args.max_mib:g} MiB (the tree {tree_text}, "
            f"{reserve / MiB:.1f} MiB kept for checkpoints, {folder_bytes(lease / 'site') / MiB:.1f} MiB of vendored "
            f"packages, 1 MiB margin).")


def never_fits(later: list, chosen: list[str], room: int, size) -> list[str]:
    """A line for each data set left out that would not fit even alone (``size(name) > room``): no later pack
    carries it until the tree, the checkpoint reserve (``--reserve-mib``) or ``--max-mib`` changes."""
    left_out = sorted({name for unit in later for name in unit.data} - set(chosen))
    return [f"{name} ({size(name) / MiB:.1f} MiB packed) does not fit even alone in {max(room, 0) / MiB:.1f} MiB: "
            f"no later pack carries it until the tree shrinks or --reserve-mib is lowered (checkpoints that come "
            f"back need it)" for name in left_out if size(name) > room]


def cmd_pack(args) -> int:
    from fyexp.core.errors import FyexpError
    from gpu_kit.data import PACK_SUFFIX, TYPICAL_PACKED_MIB, choose_units, pack_data_set
    from gpu_kit.device import read_manifest
    from gpu_kit.queue import missing_units
    from fyexp.store.provenance.source import dirty_files, git_commit

    entries, only = _entries(args)
    units = missing_units(entries, args.results_dir, only=only)
    lease = args.lease_dir
    old = read_manifest(lease / "manifest.json") if os.path.lexists(lease / "manifest.json") else {}   # as data
    if args.dry_run:
        from gpu_kit.estimate import describe, estimate

        known = {name: record["packed_bytes"] for name, record in old.get("data", {}).items()}
        room, tree, _ = _room(args, lease)

        def size(name: str) -> int:
            return known.get(name, int(TYPICAL_PACKED_MIB[name] * MiB))

        kept, later, chosen = choose_units(units, room, size)
        assumptions = _assumptions(args)
        print(describe(estimate(kept, args.results_dir, assumptions), assumptions))
        print(room_statement(room, tree, args, lease))
        if later:
            print(f"Left for a later pack (their data does not fit beside the tree and the first units' data): "
                  f"{len(later)} units ({sum(len(u.seeds) for u in later)} cells).")
        for line in never_fits(later, chosen, room, size):
            print(line)
        return 0
    if any(e.profile.startswith("paper") for e in entries) and dirty_files() and not args.allow_dirty:
        raise FyexpError(f"pack: the source tree has uncommitted changes ({', '.join(dirty_files()[:3])}); commit "
                         f"them (paper rows record their commit) or pass --allow-dirty (rows are then marked +dirty)")
    if not units:
        print("pack: nothing to do: every selected cell is finished in " + str(args.results_dir))
    lease.mkdir(parents=True, exist_ok=True)
    vendored = vendor(args.vendor, lease / "site")
    room, tree, fixed = _room(args, lease)
    records: dict[str, dict] = {}

    def packed_size(name: str) -> int:
        if args.data_dir is None:
            raise FyexpError(f"pack: the units read {name}: give the data root with --data-dir or FYEXP_DATA_DIR")
        target, record = lease / "data" / f"{name}{PACK_SUFFIX}", old.get("data", {}).get(name)
        if not (record and target.is_file() and _same_sources(record, Path(args.data_dir))):
            record = pack_data_set(name, Path(args.data_dir), target)
        records[name] = record
        return record["packed_bytes"]

    kept, later, chosen = choose_units(units, room, packed_size)
    data = {name: records[name] for name in chosen}
    for path in (lease / "data").glob("*") if (lease / "data").is_dir() else ():
        if path.name.removesuffix(PACK_SUFFIX) not in data:
            path.unlink()
    manifest = {"created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "git_commit": git_commit(),
                "code_digest": code_digest(), "units": [u.to_json() for u in kept],
                "left_for_a_later_pack": [u.name for u in later], "data": data, "vendor": vendored}
    (lease / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    packed = sum(r["packed_bytes"] for r in data.values())
    total = fixed + packed
    sizes = ", ".join(f"{name} {record['packed_bytes'] / MiB:.1f} MiB" for name, record in data.items()) or "none"
    print(f"pack: {len(kept)} units ({sum(len(u.seeds) for u in kept)} cells) → {lease}/manifest.json; data "
          f"{sizes}; travelling at most {total / MiB:.1f} of {args.max_mib:g} MiB (tree {(tree or 0) / MiB:.1f} MiB"
          f"{' (unknown: not a git checkout)' if tree is None else ''}, {max(args.reserve_mib, folder_bytes(lease / 'state') / MiB):.1f}"
          f" MiB kept for checkpoints)" + (f"; {len(later)} units left for a later pack (their data does not fit)"
                                           if later else ""))
    where = "" if lease == Path(".gl") else f" --lease-dir {lease.as_posix()}"
    print(f"device command: python3 scripts/gpu_lease.py run --budget-s {args.budget_s:g}{where}   (carry: "
          f"{lease.as_posix()})")
    return 0


def _same_sources(record: dict, data_dir: Path) -> bool:
    for relative, expected in record["files"].items():
        path = data_dir / relative
        if not path.is_file() or path.stat().st_size != expected["bytes"]:
            return False
        if hashlib.sha256(path.read_bytes()).hexdigest() != expected["sha256"]:
            return False
    return True


# --------------------------------------------------------------------------------------------------- run
class Log:
    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)

    def __call__(self, line: str) -> None:
        line = f"[{time.strftime('%H:%M:%S')}] {line}"
        print(line, file=sys.stderr, flush=True)
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")


def _site_path(lease: Path) -> None:
    site = str((lease / "site").resolve())
    if (lease / "site").is_dir() and site not in sys.path:
        sys.path.append(site)   # after the machine's own packages: a vendored copy only fills a gap
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH"), site]))


def cmd_run(args, clock=time.time) -> int:
    from fyexp.core.errors import FyexpError
    from gpu_kit.bundle import LOG_FILE, STATUS_FILE, collect
    from gpu_kit.device import (check_environment, clear, describe_machine, load_manifest, pending_units,
                                    prepare, run_unit, run_units, write_json)
    from gpu_kit.queue import Unit

    start = clock()
    deadline = start + args.budget_s
    out = args.out
    if out is None:
        raise FyexpError("run: --out not given and $OUT not set (the folder whose files come back)")
    out.mkdir(parents=True, exist_ok=True)
    lease = args.lease_dir
    _site_path(lease)
    log = Log(out / LOG_FILE)
    device = args.device
    if device == "auto":
        import importlib.util

        device = "cpu"
        if importlib.util.find_spec("torch") is not None:
            import torch

            device = "cuda" if torch.cuda.is_available() else "cpu"
    problems = check_environment(device)
    if problems:
        write_json(out / STATUS_FILE, {"error": problems, "collected": False})
        raise FyexpError(f"run: this machine cannot run the cells: {'; '.join(problems)}")
    manifest = load_manifest(lease)
    commit = manifest["git_commit"]
    if code_digest() != manifest["code_digest"] and not commit.endswith("+dirty"):
        commit += "+dirty"   # the shipped code is not the code packed at that commit
        log(f"the shipped code differs from the code at pack time: rows are marked {commit}")
    os.environ.update({"FYEXP_GIT_COMMIT": commit, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    from fyexp.store.provenance.source import git_commit

    git_commit.cache_clear()   # the rows' commit is the packed one (the device has no .git)
    scratch = args.scratch
    clear(scratch)
    os.environ["FYEXP_CACHE_DIR"] = str(scratch / "cache")
    data_root, results = scratch / "data", scratch / "results"
    prepare(lease, manifest, data_root, results)
    units = pending_units([Unit.from_json(u) for u in manifest["units"]], args.results_dir)
    machine = describe_machine(device)
    jobs = args.jobs or (4 if device.startswith("cuda") else 1)
    log(f"run: {len(units)} units ({sum(len(u.seeds) for u in units)} cells) on {machine['gpu'] or device}, "
        f"{jobs} at a time, budget {args.budget_s:g} s, rows marked {commit}")
    if any("20newsgroups" in u.data for u in units):   # build the corpus cache once, before workers race for it
        from fyexp.data.newsgroups import load_newsgroups

        load_newsgroups(data_root)

    def inline(unit):
        with budget(deadline, clock):
            return run_unit(unit, results_dir=results, data_dir=data_root, device=device)

    def spawn(index, unit):
        spec = scratch / "units" / f"{index}.json"
        spec.parent.mkdir(parents=True, exist_ok=True)
        spec.write_text(json.dumps(unit.to_json()))
        handle = (scratch / "units" / f"{index}.log").open("w")
        env = {**os.environ, "OMP_NUM_THREADS": str(max(1, (os.cpu_count() or 1) // jobs))}
        return subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "worker", str(spec), "--results-dir",
                                 str(results), "--data-dir", str(data_root), "--device", device, "--deadline",
                                 repr(deadline), "--lease-dir", str(lease)],
                                stdout=handle, stderr=subprocess.STDOUT, env=env, cwd=str(Path.cwd()))

    outcome = run_units(units, jobs=jobs, deadline=deadline, min_start_s=args.min_start_s, clock=clock,
                        inline=inline, spawn=spawn, log=log)
    for path in sorted((scratch / "units").glob("*.log")) if (scratch / "units").is_dir() else ():
        with (out / LOG_FILE).open("a", encoding="utf-8") as handle:
            handle.write(f"---- worker {path.stem}\n" + path.read_text(encoding="utf-8", errors="replace")[-200_000:])
    collected = collect(results, out, units)
    status = {"collected": True, "machine": machine, "git_commit": commit, "budget_s": args.budget_s,
              "jobs": jobs, "wall_s": round(clock() - start, 1), "units": outcome, **collected}
    write_json(out / STATUS_FILE, status)
    counts = {}
    for value in outcome.values():
        counts[value] = counts.get(value, 0) + 1
    log(f"run: {len(collected['cells'])} cell files back in {out}; units: "
        + ", ".join(f"{n} {k}" for k, n in counts.items())
        + f"; checkpoints back for {len(collected['work_returned'])} unit(s)"
        + (f", dropped for {len(collected['work_dropped'])} (too large to come back)" if collected["work_dropped"]
           else ""))
    return 0


def cmd_worker(args) -> int:
    from gpu_kit.device import STATUS_BUDGET, BudgetSpent, run_unit
    from gpu_kit.queue import Unit

    _site_path(args.lease_dir)
    unit = Unit.from_json(json.loads(Path(args.unit).read_text()))
    try:
        with budget(args.deadline):
            return run_unit(unit, results_dir=args.results_dir, data_dir=args.data_dir, device=args.device)
    except BudgetSpent as exc:
        print(f"worker: {unit.name}: stopped between epochs ({exc})", file=sys.stderr)
        return STATUS_BUDGET


def cmd_collect(args) -> int:
    from gpu_kit.bundle import collect
    from gpu_kit.device import load_manifest
    from gpu_kit.queue import Unit

    units = [Unit.from_json(u) for u in load_manifest(args.lease_dir)["units"]]
    done = collect(args.scratch / "results", args.out, units)
    print(f"collect: {len(done['cells'])} cell files → {args.out}; checkpoints of {len(done['work_returned'])} units")
    return 0


def cmd_merge(args) -> int:
    from gpu_kit.bundle import merge
    from gpu_kit.device import pending_units, read_manifest
    from gpu_kit.queue import Unit, resolve_entry

    lease = args.lease_dir
    manifest = args.lease_dir / "manifest.json"
    units = None
    if os.path.lexists(manifest):   # checked before anything is merged: a damaged one is one line, nothing merged
        units = [Unit.from_json(u) for u in read_manifest(manifest)["units"]]
        for entry in {(u.experiment, u.profile, tuple(u.entry_seeds or ()), tuple(u.sets)): u for u in units}.values():
            resolve_entry(entry.entry())   # an experiment or profile that does not resolve: one line, before merging
    tree = travelling_bytes()
    carried = folder_bytes(lease) - folder_bytes(lease / "state")
    room = None if tree is None else int(args.max_mib * MiB - tree - carried - MiB)
    summary = merge(args.source, args.results_dir, lease, skip_conflicts=args.skip_conflicts, state_room=room)
    machine = (summary.status or {}).get("machine") or {}
    print(f"merge: {len(summary.merged)} cells into {args.results_dir}"
          + (f" (run on {machine.get('gpu') or machine.get('device')}, torch {machine.get('torch')})" if machine else "")
          + (f"; {len(summary.already)} merged before" if summary.already else "")
          + (f"; {len(summary.conflicts)} conflicting, skipped" if summary.conflicts else "")
          + ("" if summary.state_parts is None else f"; {summary.state_parts} checkpoint part(s) kept in "
             f"{args.lease_dir}/state for the next job")
          + (f"; checkpoints of {summary.state_dropped} unit(s) dropped: with the tree and data they would "
             f"exceed {args.max_mib:g} MiB (those units restart)" if summary.state_dropped else ""))
    if units is not None:
        left = pending_units(units, args.results_dir)
        print(f"merge: {len(left)} of the pack's {len(units)} units still have missing cells "
              f"({sum(len(u.seeds) for u in left)} cells); run the device command again, or pack anew")
    return 0


# --------------------------------------------------------------------------------------------------- arguments
def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gpu_lease.py", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    env_results = os.environ.get("FYEXP_RESULTS_DIR") or "results"

    def common(q, results=True):
        q.add_argument("--lease-dir", type=Path, default=Path(".gl"), help="the folder that travels (carry it)")
        if results:
            q.add_argument("--results-dir", type=Path, default=Path(env_results))

    q = sub.add_parser("pack", help="pack the queue's missing cells and their data (--dry-run: estimate only)")
    common(q)
    q.add_argument("--data-dir", type=Path, default=os.environ.get("FYEXP_DATA_DIR") or None)
    q.add_argument("--experiment", help="pack this experiment's cells instead of the paper queue")
    q.add_argument("--profile", default="paper")
    q.add_argument("--only", action="append", help="with --experiment: KEY=PATTERN, as for `fyexp run`")
    q.add_argument("--seeds", help="with --experiment: '0,1,2' or '0-4'")
    q.add_argument("--set", action="append", help="with --experiment: KEY=VALUE, as for `fyexp run` (a variant)")
    q.add_argument("--max-mib", type=float, default=64.0, help="what may travel: tree + carried folder")
    q.add_argument("--reserve-mib", type=float, default=16.0,
                   help="room left for checkpoints that come back and travel again (one fy-vae member: about 14 MiB)")
    q.add_argument("--vendor", action="append", default=None,
                   help="a pure-Python package to carry (default: entmax, absent from the device's image)")
    q.add_argument("--allow-dirty", action="store_true")
    q.add_argument("--dry-run", action="store_true", help="print what one allocation would finish; write nothing")
    q.add_argument("--speedup", type=float, default=10.0)
    q.add_argument("--ensemble-cost", type=float, default=0.25)
    q.add_argument("--jobs", type=int, default=4)
    q.add_argument("--concurrency-gain", type=float, default=2.5)
    q.add_argument("--jobs-per-allocation", type=int, default=3)
    q.add_argument("--budget-s", type=float, default=540.0)

    q = sub.add_parser("run", help="on the device: run the packed units within the budget, pack the results")
    common(q)
    q.add_argument("--out", type=Path, default=os.environ.get("OUT") or None)
    q.add_argument("--budget-s", type=float, default=540.0, help="stop between epochs after this many seconds")
    q.add_argument("--device", default="auto", choices=["auto", "cuda", "cpu"])
    q.add_argument("--jobs", type=int, default=None, help="units at once (default 4 on CUDA, 1 on the CPU)")
    q.add_argument("--min-start-s", type=float, default=45.0, help="start no unit with less budget left")
    q.add_argument("--scratch", type=Path, default=Path(os.environ.get("TMPDIR") or "/tmp") / "fyexp-lease")

    q = sub.add_parser("worker", help=argparse.SUPPRESS)
    q.add_argument("unit")
    common(q)
    q.add_argument("--data-dir", type=Path)
    q.add_argument("--device", default="cuda")
    q.add_argument("--deadline", type=float, required=True)

    q = sub.add_parser("collect", help="pack a scratch folder's cells and checkpoints into --out")
    common(q, results=False)
    q.add_argument("--scratch", type=Path, default=Path(os.environ.get("TMPDIR") or "/tmp") / "fyexp-lease")
    q.add_argument("--out", type=Path, default=os.environ.get("OUT") or None, required=not os.environ.get("OUT"))

    q = sub.add_parser("merge", help="merge a returned folder (or its lease-cells.tar.gz) into results/")
    q.add_argument("source", type=Path)
    common(q)
    q.add_argument("--skip-conflicts", action="store_true", help="merge the other cells when some conflict")
    q.add_argument("--max-mib", type=float, default=64.0, help="what may travel: tree + carried folder")
    return p


# the numeric options, checked against their domains (fyexp.core.constraints.OPTION_DOMAINS) before any command starts
NUMBER_OPTIONS = ("--speedup", "--ensemble-cost", "--jobs", "--concurrency-gain", "--jobs-per-allocation",
                  "--budget-s", "--max-mib", "--reserve-mib", "--min-start-s")
COMMANDS = {"pack": cmd_pack, "run": cmd_run, "worker": cmd_worker, "collect": cmd_collect, "merge": cmd_merge}


def main(argv: list[str] | None = None, clock=time.time) -> int:
    from fyexp.core.errors import FyexpError

    args = parser().parse_args(argv)
    if getattr(args, "vendor", "absent") is None:
        args.vendor = ["entmax"]
    try:
        from fyexp.core.constraints import check_options

        check_options({option: getattr(args, option[2:].replace("-", "_")) for option in NUMBER_OPTIONS
                       if hasattr(args, option[2:].replace("-", "_"))})   # --jobs 0, --speedup nan: one line
        if args.command == "run":
            return cmd_run(args, clock=clock)
        return COMMANDS[args.command](args)
    except FyexpError as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
