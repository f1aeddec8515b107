"""Where a number came from, from the source tree: its commit, the files its experiment imports, and the
fingerprint committed with the code.

Every result row records ``git_commit`` (``+dirty`` when the source tree had uncommitted changes), fyexp's version,
the device, the wall time and a timestamp (:func:`provenance_columns`).  Whether a row's code is stale is decided by
the functions its cell executed alone (:mod:`fyexp.store.provenance.executed`, in
:func:`fyexp.store.provenance.freshness.
code_state`), compared in HEAD's tree unpacked once (:func:`head_tree`); the import-tree rule (a ``code_hash`` of the
files the runner imports, or ``git diff <commit> HEAD`` over them) went with the two-file record form
(2026-12-01).  :func:`module_tree` still says which files a runner imports (the claims' source text).

``fyexp run --profile paper`` refuses to run on a dirty tree (:func:`require_clean_tree`) unless asked to; the
rows of such a run carry ``+dirty``.
"""

from __future__ import annotations

import ast
import atexit
import datetime as _dt
import functools
import io
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
# Modules that store, print or raise but compute no number: a change to them does not make a result stale.
BOOKKEEPING = ("fyexp.report", "fyexp.store.results", "fyexp.store.io", "fyexp.run.progress", "fyexp.core.errors",
               "fyexp.store.user_cache", "fyexp.store.provenance.memo")


@functools.lru_cache(maxsize=None)
def in_git_checkout(root: Path = SOURCE_ROOT) -> bool:
    """Whether ``root`` is the top of a git checkout (:func:`fyexp.store.gitinfo.is_checkout_root`)."""
    return gitinfo.is_checkout_root(root)


def dirty_files(root: Path = SOURCE_ROOT) -> list[str]:
    """Uncommitted changes (tracked or untracked, ignored files excepted) under :data:`TRACKED_PATHS`; empty outside
    git."""
    if not in_git_checkout(root):
        return []
    return gitinfo.dirty_files(root, TRACKED_PATHS)


@functools.lru_cache(maxsize=None)
def git_commit(root: Path = SOURCE_ROOT) -> str:
    """The source tree's commit (``+dirty`` when it has uncommitted changes), ``$FYEXP_GIT_COMMIT`` where set
    (e.g. a Docker image built without ``.git``), or ``unknown``."""
    env = os.environ.get("FYEXP_GIT_COMMIT")
    if env:
        return env
    if not in_git_checkout(root):
        return "unknown"
    sha = gitinfo.head_commit(root)
    if sha is None:
        return "unknown"
    return sha + ("+dirty" if dirty_files(root) else "")


def require_clean_tree(allow_dirty: bool, module: str = "fyexp", what: str = "--profile paper",
                       root: Path = SOURCE_ROOT) -> None:
    """Refuse (:class:`FyexpError`) to produce ``what`` results of an experiment of the ``fyexp`` package (``module``
    its runner module) from uncommitted code, unless ``allow_dirty``.

    Outside a git checkout there is nothing to check (rows then carry ``$FYEXP_GIT_COMMIT`` or ``unknown``); a
    runner outside the package (a user's own module) is not checked either.
    """
    if allow_dirty or not (module == "fyexp" or module.startswith("fyexp.")):
        return
    files = dirty_files(root)
    if files:
        shown = ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
        raise FyexpError(f"{what}: the source tree has uncommitted changes ({shown}); commit them, run from a clean "
                         f"clone, or pass --allow-dirty (every row is then marked +dirty)")


# ---- the files an experiment imports -------------------------------------------------------------------------
def _module_file(name: str, package_root: Path) -> Path | None:
    """``fyexp.em.mixture`` → ``<root>/fyexp/em/mixture.py`` (or the package's ``__init__.py``)."""
    parts = name.split(".")
    base = package_root.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def imports_of(path: Path, module: str) -> frozenset[str]:
    """The ``fyexp`` modules that ``path`` (module ``module``) imports anywhere in its source (inside functions too),
    by absolute or relative import; a name imported from a package counts as well, for where it is a submodule (the
    callers keep the names that are files).  The one import parser of fyexp: :func:`module_tree` leaves the
    :data:`BOOKKEEPING` modules out of it, :func:`fyexp.report.cache.code_files` keeps them."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    return _imported(path.read_text(encoding="utf-8"), package)


def _imports(path: Path, module: str) -> frozenset[str]:
    """:func:`imports_of` without the :data:`BOOKKEEPING` modules."""
    return frozenset(name for name in imports_of(path, module)
                     if not any(name == p or name.startswith(p + ".") for p in BOOKKEEPING))


_IMPORTS = TextMemo("fyexp-imports", __file__)


@functools.lru_cache(maxsize=None)
def _imported(source: str, package: str) -> frozenset[str]:
    """:func:`imports_of` a module's ``source`` in ``package``: parsed once per text and process (a file and its copy
    in the unpacked HEAD are one parse), and kept between processes by the text's SHA-256
    (:mod:`fyexp.store.provenance.memo`)."""
    return _IMPORTS.get(source, lambda: parse_imports(source, package), package)


def parse_imports(source: str, package: str) -> frozenset[str]:
    """:func:`_imported`, parsed (no cache)."""
    tree = ast.parse(source)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found |= {f"{target}.{a.name}" for a in node.names}  # names that are submodules
    return frozenset(name for name in found if name == "fyexp" or name.startswith("fyexp."))


@functools.lru_cache(maxsize=None)
def module_tree(module: str, package_root: Path = SOURCE_ROOT) -> list[Path]:
    """Every file of the ``fyexp`` package that ``module`` imports, directly or not (static, from the source, imports
    inside functions included): the modules themselves and the ``__init__.py`` of each package on the way; the
    :data:`BOOKKEEPING` modules are left out.  Sorted, relative to the root."""
    seen: dict[str, Path] = {}
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        path = _module_file(name, package_root)
        if path is None:
            continue
        seen[name] = path
        parts = name.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]
        todo += sorted(_imports(path, name) - set(seen))
    return sorted({p.relative_to(package_root) for p in seen.values()})


def runner_module(runner: str) -> str:
    """A spec's ``runner`` (``gmm_clustering`` or a dotted path) → its module name."""
    return runner if "." in runner else f"fyexp.experiments.{runner}"


@functools.lru_cache(maxsize=None)
def head_tree(root: Path) -> Path | None:
    """The ``fyexp`` package as committed at HEAD, unpacked once per process into a temporary folder."""
    archive = gitinfo.archive(root, "HEAD", "fyexp")
    if archive is None:
        return None
    folder = Path(tempfile.mkdtemp(prefix="fyexp-head-"))
    atexit.register(shutil.rmtree, folder, True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    return folder


# ---- the provenance columns of a row --------------------------------------------------------------------------
def device_description(device: str) -> str:
    """``cpu (2 cores)`` or ``cuda (NVIDIA H200)``."""
    if device.startswith("cuda"):
        import torch

        return f"cuda ({torch.cuda.get_device_name(0)})"
    return f"cpu ({os.cpu_count()} cores, {platform.machine()})"


def provenance_columns(device: str, wall_time_s: float) -> dict:
    """The provenance columns of one finished cell."""
    return {
        "git_commit": git_commit(),
        "fyexp_version": __version__,
        "device": device_description(device),
        "wall_time_s": round(float(wall_time_s), 3),
        "timestamp": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }


# ---- the fingerprint committed at HEAD ------------------------------------------------------------------------
FINGERPRINTS = "fyexp/reference/fingerprints.json"   # fyexp.run.fingerprints.REFERENCE, relative to the checkout
FINGERPRINT_MOVES = "fyexp/reference/fingerprint-moves.json"   # :data:`fyexp.run.fingerprints.MOVES_REFERENCE`


def head_fingerprints(root: Path | None = None, relative: str = FINGERPRINTS) -> dict | None:
    """The behaviour fingerprints committed at HEAD (``fyexp/reference/fingerprints.json`` of :func:`head_tree`, the
    unpacked HEAD the executed functions are compared with) in the checkout ``root`` (default the source tree's);
    ``None`` outside git or where HEAD has no readable such file.  ``relative``: another file of the same form
    (:data:`FINGERPRINT_MOVES`)."""
    import json

    root = Path(root).resolve() if root is not None else SOURCE_ROOT
    head = head_tree(root) if in_git_checkout(root) else None
    try:
        found = json.loads((head / relative).read_text(encoding="utf-8")) if head is not None else None
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def current_fingerprint(name: str, root: Path = SOURCE_ROOT) -> dict | None:
    """Experiment ``name``'s fingerprint in the source tree as it is on disk (what a run made now is made under:
    the committed one at its commit for a clean tree), ``None`` where the file or the entry is missing or
    unreadable.  Stored in each run record (:func:`fyexp.store.provenance.record.write_record`)."""
    import json

    try:
        found = json.loads((Path(root) / FINGERPRINTS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    entry = found.get(name) if isinstance(found, dict) else None
    return entry if isinstance(entry, dict) and entry else None


def fingerprint_difference(name: str, commit: str, root: Path | None = None,
                           recorded: dict | None = None) -> str | None:
    """``None`` when experiment ``name``'s fingerprint at the row's ``commit`` equals the one committed at HEAD, or
    one of HEAD's settings moves (:func:`settings_moves`), else why not, one phrase (the reason a row stale by code
    stays stale).

    Equal fingerprints mean the slice's metrics did not move between the two commits (:mod:`fyexp.run.fingerprints`
    computes them; its test keeps HEAD's file true of HEAD's code, and a commit that changed behaviour had to update
    it).  A ``+dirty`` commit never counts: its tree was not the commit's.  The fingerprint at the commit is
    ``recorded``, stored in the run record at write time (``None``: none was kept)."""
    if not commit or commit in ("nan", "None", "unknown"):
        return "its commit is unknown"
    if commit.endswith("+dirty"):
        return "made from a tree with uncommitted changes"
    now = (head_fingerprints(root) or {}).get(name)
    if not now:
        return f"HEAD keeps no fingerprint of {name}"
    then = recorded
    if not then:
        return f"no fingerprint of {name} was kept at {commit[:7]}"
    if then == now or then in settings_moves(name, root):
        return None
    return f"the fingerprint of {name} changed since {commit[:7]}"


def settings_moves(name: str, root: Path | None = None) -> list[dict]:
    """Experiment ``name``'s fingerprints at HEAD's code under the settings from before each settings-only change
    committed at HEAD (:data:`fyexp.run.fingerprints.SETTINGS_MOVES`, stored in :data:`FINGERPRINT_MOVES`): a row whose
    fingerprint at its commit is one of them ran code that HEAD's reproduces at its settings."""
    moves = (head_fingerprints(root, FINGERPRINT_MOVES) or {}).get(name)
    if not isinstance(moves, list):
        return []
    return [m["fingerprint"] for m in moves if isinstance(m, dict) and isinstance(m.get("fingerprint"), dict)
            and m["fingerprint"]]


def fingerprint_unchanged(name: str, commit: str, root: Path | None = None, recorded: dict | None = None) -> bool:
    """Whether :func:`fingerprint_difference` finds none."""
    return fingerprint_difference(name, commit, root, recorded) is None
