"""The source tree's facts: its commit (``+dirty`` for uncommitted changes, which ``--profile paper`` refuses), the
provenance columns of a row, the files a runner imports (the claims' source text), HEAD's tree unpacked once and the
behaviour fingerprints committed there.
"""

from __future__ import annotations

import ast
import atexit
import datetime as _dt
import functools
import io
import json
import os
import platform
import shutil
import tarfile
import tempfile
from pathlib import Path

from fyexp import __version__

from fyexp.store import gitinfo
from fyexp.core.errors import FyexpError
from fyexp.store.provenance.memo import TextMemo

SOURCE_ROOT = Path(__file__).resolve().parents[3]  # the checkout (or site-packages) holding the fyexp package
TRACKED_PATHS = ("fyexp", "experiments", "pyproject.toml")  # what a run's numbers can depend on
# Modules that store, print or raise but compute no number: left out of :func:`module_tree`.
BOOKKEEPING = ("fyexp.report", "fyexp.store.results", "fyexp.store.io", "fyexp.run.progress", "fyexp.core.errors",
               "fyexp.store.user_cache", "fyexp.store.provenance.memo")


in_git_checkout = functools.cache(gitinfo.is_checkout_root)   # whether a folder is the top of a git checkout


def dirty_files(root: Path = SOURCE_ROOT) -> list[str]:
    """Uncommitted changes (tracked or untracked, ignored files excepted) under :data:`TRACKED_PATHS`; empty outside
    git."""
    return gitinfo.dirty_files(root, TRACKED_PATHS) if in_git_checkout(root) else []


@functools.cache
def git_commit(root: Path = SOURCE_ROOT) -> str:
    """The source tree's commit (``+dirty`` when it has uncommitted changes), ``$FYEXP_GIT_COMMIT`` where set
    (e.g. a Docker image built without ``.git``), or ``unknown``."""
    env = os.environ.get("FYEXP_GIT_COMMIT")
    if env:
        return env
    sha = gitinfo.head_commit(root) if in_git_checkout(root) else None
    return "unknown" if sha is None else sha + ("+dirty" if dirty_files(root) else "")


def require_clean_tree(allow_dirty: bool, module: str = "fyexp", root: Path = SOURCE_ROOT) -> None:
    """Refuse (:class:`FyexpError`) to produce ``--profile paper`` results of an experiment of the ``fyexp`` package
    (``module`` its runner module) from uncommitted code, unless ``allow_dirty``; nothing to check outside git."""
    if allow_dirty or not (module == "fyexp" or module.startswith("fyexp.")):
        return
    if files := dirty_files(root):
        shown = ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
        raise FyexpError(f"--profile paper: the source tree has uncommitted changes ({shown}); commit them, run from a "
                         f"clean clone, or pass --allow-dirty (every row is then marked +dirty)")


# ---- the files an experiment imports -------------------------------------------------------------------------
def imports_of(path: Path, module: str) -> frozenset[str]:
    """The ``fyexp`` modules that ``path`` (module ``module``) imports anywhere (inside functions too), by absolute
    or relative import; a name imported from a package counts too, in case it is a submodule (callers keep the names
    that are files); parsed once per text, kept between processes (:mod:`fyexp.store.provenance.memo`)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    return _imported(path.read_text(encoding="utf-8"), package)


_IMPORTS = TextMemo("fyexp-imports", __file__)


@functools.cache
def _imported(source: str, package: str) -> frozenset[str]:
    def parse() -> frozenset[str]:
        found: set[str] = set()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                target = node.module or ""
                if node.level:
                    parts = package.split(".")
                    target = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
                found |= {target} | {f"{target}.{a.name}" for a in node.names}  # names that are submodules
        return frozenset(name for name in found if name == "fyexp" or name.startswith("fyexp."))

    return _IMPORTS.get(source, parse, package)


@functools.cache
def module_tree(module: str, package_root: Path = SOURCE_ROOT) -> list[Path]:
    """Every file of the ``fyexp`` package that ``module`` imports, directly or not (:func:`imports_of`), with the
    ``__init__.py`` of each package on the way, the :data:`BOOKKEEPING` modules left out; sorted, relative to the
    root."""
    seen: dict[str, Path] = {}
    todo = [module]
    while todo:
        name = todo.pop()
        base = package_root.joinpath(*name.split("."))
        path = None if name in seen else next((p for p in (base.with_suffix(".py"), base / "__init__.py")
                                               if p.is_file()), None)
        if path is None:
            continue
        seen[name] = path
        parts = name.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]
        todo += sorted(n for n in imports_of(path, name) - set(seen)
                       if not any(n == p or n.startswith(p + ".") for p in BOOKKEEPING))
    return sorted({p.relative_to(package_root) for p in seen.values()})


def runner_module(runner: str) -> str:
    """A spec's ``runner`` (``gmm_clustering`` or a dotted path) → its module name."""
    return runner if "." in runner else f"fyexp.experiments.{runner}"


def unpacked(root: Path, treeish: str, folder: Path) -> Path | None:
    """The ``fyexp`` package as committed at ``treeish`` in the checkout ``root``, unpacked into ``folder`` (returned;
    ``None`` where git cannot archive it): the one reader of a commit's tree (also scripts/migrate_code_keys.py)."""
    archive = gitinfo.archive(root, treeish, "fyexp")
    if archive is None:
        return None
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    return folder


@functools.cache
def head_tree(root: Path) -> Path | None:
    """HEAD's :func:`unpacked` tree of the checkout ``root``, once per process into a temporary folder; ``None``
    outside git."""
    if not in_git_checkout(root):
        return None
    folder = Path(tempfile.mkdtemp(prefix="fyexp-head-"))
    atexit.register(shutil.rmtree, folder, True)
    return unpacked(root, "HEAD", folder)


# ---- the provenance columns of a row --------------------------------------------------------------------------
def provenance_columns(device: str, wall_time_s: float) -> dict:
    """The provenance columns of one finished cell (its device as ``cpu (2 cores, x86_64)`` or ``cuda (NVIDIA
    H200)``)."""
    described = f"cpu ({os.cpu_count()} cores, {platform.machine()})"
    if device.startswith("cuda"):
        import torch

        described = f"cuda ({torch.cuda.get_device_name(0)})"
    return {
        "git_commit": git_commit(),
        "fyexp_version": __version__,
        "device": described,
        "wall_time_s": round(float(wall_time_s), 3),
        "timestamp": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }


# ---- the fingerprint committed at HEAD ------------------------------------------------------------------------
FINGERPRINTS = "fyexp/reference/fingerprints.json"   # fyexp.run.fingerprints.REFERENCE, relative to the checkout
FINGERPRINT_MOVES = "fyexp/reference/fingerprint-moves.json"   # :data:`fyexp.run.fingerprints.MOVES_REFERENCE`


def _json_object(path: Path | None) -> dict | None:
    try:
        found = json.loads(path.read_text(encoding="utf-8")) if path is not None else None
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def head_fingerprints(root: Path | None = None, relative: str = FINGERPRINTS) -> dict | None:
    """The fingerprints file ``relative`` in :func:`head_tree` of the checkout ``root`` (default the source tree's);
    ``None`` outside git or when unreadable."""
    head = head_tree(Path(root).resolve() if root is not None else SOURCE_ROOT)
    return _json_object(head / relative if head is not None else None)


def current_fingerprint(name: str, root: Path = SOURCE_ROOT) -> dict | None:
    """Experiment ``name``'s fingerprint in the source tree on disk (what a run made now is made under), stored in
    each run record; ``None`` where the file or the entry is missing or unreadable."""
    entry = (_json_object(Path(root) / FINGERPRINTS) or {}).get(name)
    return entry if isinstance(entry, dict) and entry else None


def fingerprint_difference(name: str, commit: str, root: Path | None = None,
                           recorded: dict | None = None) -> str | None:
    """``None`` when experiment ``name``'s fingerprint at the row's ``commit`` (``recorded`` in its run record)
    equals HEAD's or one of HEAD's settings moves (:data:`FINGERPRINT_MOVES`: HEAD's under the settings from before a
    settings-only change), else why not, one phrase (why a row stale by code stays stale).  Equal fingerprints mean
    the slice's metrics did not move between the commits (:mod:`fyexp.run.fingerprints`, whose test keeps HEAD's file
    true of HEAD's code); a ``+dirty`` commit never counts: its tree was not the commit's."""
    if not commit or commit in ("nan", "None", "unknown"):
        return "its commit is unknown"
    if commit.endswith("+dirty"):
        return "made from a tree with uncommitted changes"
    now = (head_fingerprints(root) or {}).get(name)
    if not now:
        return f"HEAD keeps no fingerprint of {name}"
    if not recorded:
        return f"no fingerprint of {name} was kept at {commit[:7]}"
    moves = (head_fingerprints(root, FINGERPRINT_MOVES) or {}).get(name)
    moves = [m.get("fingerprint") for m in moves if isinstance(m, dict)] if isinstance(moves, list) else []
    if recorded == now or recorded in moves:
        return None
    return f"the fingerprint of {name} changed since {commit[:7]}"
