"""The fyexp code a cell executed, and whether it changed since: staleness that follows the code path, not the files.

While a cell runs (and while its ensemble is prefit), :class:`ExecutedCode` records every function of the ``fyexp``
package that was called, through ``sys.monitoring`` on Python ≥ 3.12 (once per function) or ``sys.setprofile`` on
3.11 (the hook keeps the code object of each ``call`` event and does nothing else); the code objects are filtered to fyexp's own files when
the cell ends.  A nested function, lambda or comprehension counts as the top-level function or method that holds
it.

Each function is identified as ``<path relative to the package's parent>:<qualname>`` (``fyexp/train/loop.py:fit``,
``fyexp/models/vae.py:VAE.forward``) and hashed **normalised** (:func:`function_hash`): the AST of its definition
(decorators included) without docstrings, dumped without positions, so comments, docstrings and formatting do not
count; a method's hash includes its class's own statements (class attributes), and each module's top-level
statements (imports, constants; function and class bodies aside) count as the pseudo-function ``<module>`` of every
module whose functions ran.  The record (a mapping of functions to hashes) is written beside the cell file as
``<cell>.code.json``; a row is **stale** when one of them hashes differently at HEAD or is gone
(:func:`changed_functions`).  Edits to functions the cell never ran, docstrings and comments flip no row.

The record is read back only through :func:`read_record`, which checks it against what :func:`write_record` writes
(:func:`record_problem`): a JSON object whose keys name a function of a ``.py`` file inside the package
(``fyexp/<modules>.py:<qualname>``, never an absolute path or ``..``, so nothing outside the package is opened) and
whose values are hashes.  A record that fails is one warning line (:func:`fyexp.damaged.warn_damaged`) and its
rows have unknown provenance.

Limits: code run before the cell (imports) is not recorded except through ``<module>``; a cell resumed from a
finished checkpoint records only what it ran after the resume.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
import re
import sys
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent   # fyexp/
ROOT = PACKAGE_DIR.parent
CODE_SUFFIX = ".code.json"
MODULE = "<module>"
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_PART = rf"(?:{_NAME}|<{_NAME}>)"
RECORD_KEY = re.compile(rf"fyexp/(?:{_NAME}/)*{_NAME}\.py:{_PART}(?:\.{_PART})*")   # a function of a package file
RECORD_HASH = re.compile(r"[0-9a-f]{12}")                                            # :func:`function_hashes`' digest


ENV_SWITCH = "FYEXP_RECORD_CODE"  # "0": record nothing (rows then fall back to the file rule of fyexp.provenance)


def recording_enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "1") != "0"


class ExecutedCode:
    """``with ExecutedCode() as rec: ...`` then ``rec.functions()``: the fyexp functions called inside (``None``
    when recording is switched off by ``FYEXP_RECORD_CODE=0``).

    Two mechanisms, one record:

    * Python ≥ 3.12: ``sys.monitoring``'s ``PY_START`` event, whose callback keeps the code object and returns
      ``DISABLE``, so each function costs one callback per cell and the rest runs at full speed
      (``restart_events()`` on entry re-arms the functions an earlier cell of the process disabled);
    * Python 3.11: ``sys.setprofile``, whose hook runs on every call and return while bytecode takes the slower
      tracing path: measured on quick cells, 4–9 % (frac-vae, torch) to 18–20 % (gmm-clustering, numpy and small
      Python functions) of a sub-second cell (``sys.settrace`` measured no cheaper).

    The whole cell is recorded (sampling would miss functions that run once, late, such as the evaluation, and
    make the staleness it feeds unsound)."""

    TOOL_NAME = "fyexp-executed"

    def __init__(self) -> None:
        self.codes: set = set()
        self._previous = None
        self._tool: int | None = None
        self.enabled = recording_enabled()

    def _hook(self, frame, event, arg):  # the profile hook (3.11): as little as possible per event
        if event == "call":
            self.codes.add(frame.f_code)

    def _start(self, code, offset):  # the PY_START callback (3.12+): record once, then off for this code object
        self.codes.add(code)
        return sys.monitoring.DISABLE

    def _claim_tool(self) -> int | None:
        monitoring = getattr(sys, "monitoring", None)
        if monitoring is None:
            return None
        for tool in (monitoring.PROFILER_ID, 3, 4):  # a free tool id; a debugger or coverage may hold some
            if monitoring.get_tool(tool) is None:
                monitoring.use_tool_id(tool, self.TOOL_NAME)
                return tool
        return None

    def __enter__(self) -> "ExecutedCode":
        if not self.enabled:
            return self
        self._tool = self._claim_tool()
        if self._tool is not None:
            monitoring = sys.monitoring
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
        """``path:qualname`` of the top-level functions and methods of fyexp that ran."""
        if not self.enabled:
            return None
        prefix = str(PACKAGE_DIR) + "/"
        found = set()
        for code in self.codes:
            if (code.co_filename.startswith(prefix) and code.co_filename.endswith(".py")
                    and code.co_filename != __file__):  # the recorder's own __exit__
                name = function_name(code.co_qualname)
                if name:
                    found.add(f"{Path(code.co_filename).relative_to(ROOT).as_posix()}:{name}")
        return found


def function_name(qualname: str) -> str | None:
    """``f.<locals>.g`` → ``f``, ``C.m.<locals>.<lambda>`` → ``C.m``, ``<module>`` → ``None`` (module code)."""
    name = qualname.split(".<locals>", 1)[0]
    return None if name.startswith("<") else name


# ---- normalised hashes -----------------------------------------------------------------------------------------
def _strip_docstrings(node: ast.AST) -> ast.AST:
    for item in ast.walk(node):
        body = getattr(item, "body", None)
        if (isinstance(item, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            item.body = body[1:] or [ast.Pass()]
    return node


def _dump(nodes: list[ast.AST]) -> str:
    return "\n".join(ast.dump(n, annotate_fields=False, include_attributes=False) for n in nodes)


DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@functools.lru_cache(maxsize=None)
def _module_hashes(path: Path, mtime_ns: int) -> dict[str, str]:
    """Every top-level function and method of one file → its normalised hash, plus ``<module>``."""
    tree = _strip_docstrings(ast.parse(path.read_text(encoding="utf-8")))
    def digest(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    hashes = {MODULE: digest(_dump([s for s in tree.body if not isinstance(s, DEFS)]))}

    def visit(body: list[ast.stmt], prefix: str, context: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                hashes[prefix + node.name] = digest(context + _dump([node]))
            elif isinstance(node, ast.ClassDef):
                own = _dump([*node.decorator_list, *node.bases, *[s for s in node.body if not isinstance(s, DEFS)]])
                visit(node.body, f"{prefix}{node.name}.", context + own)

    visit(tree.body, "", "")
    return hashes


def function_hashes(functions: set[str] | list[str], root: Path = ROOT) -> dict[str, str | None]:
    """``path:qualname`` → normalised hash of that function in the tree at ``root`` (``None``: gone), with the
    ``<module>`` entry of each file involved."""
    out: dict[str, str | None] = {}
    for entry in sorted(functions):
        rel, _, name = entry.partition(":")
        path = root / rel
        hashes = _module_hashes(path, path.stat().st_mtime_ns) if path.is_file() else {}
        out[entry] = hashes.get(name)
        out[f"{rel}:{MODULE}"] = hashes.get(MODULE)
    return out


def write_record(cell_file: Path, functions: set[str]) -> dict[str, str | None]:
    """Write ``<cell>.code.json``: the executed functions and their normalised hashes now."""
    from fyexp.io import atomic_write_text

    record = function_hashes(functions)
    atomic_write_text(cell_file.with_suffix(CODE_SUFFIX), json.dumps(record, indent=1, sort_keys=True) + "\n")
    return record


def record_problem(record: object) -> str | None:
    """What is wrong with a parsed ``<cell>.code.json`` (``None``: nothing): it must be a JSON object mapping
    :data:`RECORD_KEY` names (``fyexp/train/loop.py:fit``) to a 12-hex-digit hash or ``null``."""
    if not isinstance(record, dict):
        return f"not a JSON object of functions (a JSON {type(record).__name__})"
    for key, value in record.items():
        if not RECORD_KEY.fullmatch(key):
            return f"entry {key[:80]!r} does not name a function of a Python file of the fyexp package"
        if value is not None and not (isinstance(value, str) and RECORD_HASH.fullmatch(value)):
            return f"entry {key!r}: {str(value)[:40]!r} is not a function hash"
    return None


def read_record(cell_file: Path) -> tuple[dict[str, str | None] | None, str | None]:
    """The executed-code record beside ``cell_file``: ``(record, None)``; ``(None, None)`` when the cell has none
    (recording was off, or the row predates records: the file rule judges it); ``(None, what is wrong)`` when the
    record is damaged (:func:`record_problem`), named in one warning line."""
    from fyexp.damaged import UNKNOWN_PROVENANCE_NOTE, read_json, warn_damaged

    path = Path(cell_file).with_suffix(CODE_SUFFIX)
    if not path.exists():
        return None, None
    record, problem = read_json(path)
    if problem is None:
        problem = record_problem(record)
    if problem is None:
        return record, None
    warn_damaged(path, "damaged executed-code record", problem, UNKNOWN_PROVENANCE_NOTE)
    return None, problem


def changed_functions(record: dict[str, str | None], root: Path) -> list[str]:
    """The recorded functions whose normalised hash in the tree at ``root`` differs (or that are gone)."""
    now = function_hashes([k for k in record if not k.endswith(":" + MODULE)], root)
    return sorted(k for k, v in record.items() if now.get(k) != v)


def prefit_record_path(work_dir: Path) -> Path:
    """Where an ensemble's prefit leaves the functions it ran, for each member cell to merge into its record."""
    return Path(work_dir) / "prefit-code.json"
