"""The fyexp code a cell executed, and whether it changed since: staleness follows the code path, not the files.

:class:`ExecutedCode` records every top-level function or method of ``fyexp`` called while a cell runs (or its
ensemble is prefit; nested functions count as their holder), keyed ``fyexp/models/vae.py:VAE.forward``.  Each is
hashed **normalised** (:func:`text_hashes`: its AST without docstrings or positions, with its class's own statements;
a module's top-level statements are ``<module>``), the ``code`` of the run record; a row is **stale** when one hashes
differently at HEAD or is gone (:func:`changed_functions`).  Limits: imports count only through ``<module>``; a cell
resumed from a checkpoint records only what it ran after the resume.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import os
import sys
from pathlib import Path

from fyexp.store.provenance.memo import TextMemo

PACKAGE_DIR = Path(__file__).resolve().parents[2]   # fyexp/
ROOT = PACKAGE_DIR.parent
MODULE = "<module>"
ENV_SWITCH = "FYEXP_RECORD_CODE"  # "0": record nothing (the rows' code is then unknown: store.provenance.freshness)


class ExecutedCode:
    """``with ExecutedCode() as rec: ...`` then ``rec.functions()``: the fyexp functions called inside (``None``
    when ``FYEXP_RECORD_CODE=0``).  On Python >= 3.12 a ``sys.monitoring`` ``PY_START`` callback returning
    ``DISABLE`` (one call per function and cell); on 3.11 ``sys.setprofile`` (4-20 % of a sub-second cell).  Never
    sampled: that would miss functions that run once, late (the evaluation), and make staleness unsound."""

    TOOL_NAME = "fyexp-executed"

    def __init__(self) -> None:
        self.codes: set = set()
        self._previous = None
        self._tool: int | None = None
        self.enabled = os.environ.get(ENV_SWITCH, "1") != "0"

    def _hook(self, frame, event, arg):  # the profile hook (3.11): as little as possible per event
        if event == "call":
            self.codes.add(frame.f_code)

    def _start(self, code, offset):  # the PY_START callback (3.12+): record once, then off for this code object
        self.codes.add(code)
        return sys.monitoring.DISABLE

    def __enter__(self) -> "ExecutedCode":
        if not self.enabled:
            return self
        monitoring = getattr(sys, "monitoring", None)
        # a free tool id (a debugger or coverage may hold some), else the profile hook
        self._tool = next((t for t in (monitoring.PROFILER_ID, 3, 4) if monitoring.get_tool(t) is None), None) \
            if monitoring is not None else None
        if self._tool is not None:
            monitoring.use_tool_id(self._tool, self.TOOL_NAME)
            monitoring.register_callback(self._tool, monitoring.events.PY_START, self._start)
            monitoring.restart_events()
            monitoring.set_events(self._tool, monitoring.events.PY_START)
        else:
            self._previous = sys.getprofile()
            sys.setprofile(self._hook)
        return self

    def __exit__(self, *exc) -> None:
        if not self.enabled:
            return
        if self._tool is not None:
            monitoring = sys.monitoring
            monitoring.set_events(self._tool, 0)
            monitoring.register_callback(self._tool, monitoring.events.PY_START, None)
            monitoring.free_tool_id(self._tool)
            self._tool = None
        else:
            sys.setprofile(self._previous)

    def functions(self) -> set[str] | None:
        """``path:qualname`` of the top-level functions and methods of fyexp that ran (``f.<locals>.g`` as ``f``;
        module code and the recorder's own ``__exit__`` left out)."""
        if not self.enabled:
            return None
        prefix = str(PACKAGE_DIR) + "/"
        names = {(code.co_filename, code.co_qualname.split(".<locals>", 1)[0]) for code in self.codes
                 if code.co_filename.startswith(prefix) and code.co_filename.endswith(".py")
                 and code.co_filename != __file__}
        return {f"{Path(file).relative_to(ROOT).as_posix()}:{name}" for file, name in names
                if not name.startswith("<")}


# ---- normalised hashes -----------------------------------------------------------------------------------------
DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_HASHES = TextMemo("function-hashes", __file__)


@functools.cache
def _module_hashes(path: Path, mtime_ns: int) -> dict[str, str]:
    """:func:`text_hashes` of one file, once per text and process, kept between processes by its SHA-256."""
    return _HASHES.get(text := path.read_text(encoding="utf-8"), lambda: text_hashes(text))


def text_hashes(source: str) -> dict[str, str]:
    """Every top-level function and method of a module's ``source`` → its normalised hash, plus ``<module>``."""
    tree = ast.parse(source)
    for item in ast.walk(tree):  # docstrings out
        body = getattr(item, "body", None)
        if (isinstance(item, (ast.Module, *DEFS)) and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)):
            item.body = body[1:] or [ast.Pass()]

    def dump(nodes: list[ast.AST]) -> str:
        return "\n".join(ast.dump(n, annotate_fields=False, include_attributes=False) for n in nodes)

    def digest(text: str) -> str:   # 12 hex digits (record.CODE_HASH)
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    hashes = {MODULE: digest(dump([s for s in tree.body if not isinstance(s, DEFS)]))}

    def visit(body: list[ast.stmt], prefix: str, context: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                hashes[prefix + node.name] = digest(context + dump([node]))
            elif isinstance(node, ast.ClassDef):
                own = dump([*node.decorator_list, *node.bases, *[s for s in node.body if not isinstance(s, DEFS)]])
                visit(node.body, f"{prefix}{node.name}.", context + own)

    visit(tree.body, "", "")
    return hashes


def function_hashes(functions: set[str] | list[str], root: Path = ROOT,
                    files: dict[str, dict[str, str]] | None = None) -> dict[str, str | None]:
    """``path:qualname`` → normalised hash of that function in the tree at ``root`` (``None``: gone), with the
    ``<module>`` entry of each file involved.  ``files``: the hashes of each file of an unchanging tree (HEAD's
    unpacked), filled as files are read; without it a file is looked up by its modification time."""
    out: dict[str, str | None] = {}
    for entry in sorted(functions):
        rel, _, name = entry.partition(":")
        if (hashes := files.get(rel) if files is not None else None) is None:
            path = root / rel
            hashes = _module_hashes(path, path.stat().st_mtime_ns) if path.is_file() else {}
            if files is not None:
                files[rel] = hashes
        out[entry] = hashes.get(name)
        out[f"{rel}:{MODULE}"] = hashes.get(MODULE)
    return out


def changed_functions(record: dict[str, str | None], root: Path,
                      files: dict[str, dict[str, str]] | None = None) -> list[str]:
    """The recorded functions whose normalised hash in the tree at ``root`` differs or that are gone (``files``: as
    in :func:`function_hashes`)."""
    now = function_hashes([k for k in record if not k.endswith(":" + MODULE)], root, files)
    return sorted(k for k, v in record.items() if now.get(k) != v)


def prefit_record_path(work_dir: Path) -> Path:
    """Where an ensemble's prefit leaves the functions it ran, for each member cell to merge into its record."""
    return Path(work_dir) / "prefit-code.json"
