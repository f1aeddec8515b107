"""The report's output cache: a table or figure is drawn again only when what it is drawn from changed.

Each output of ``fyexp report`` (a figure entry of a spec's ``plots:``, a table's Markdown and LaTeX) has a **key**,
the SHA-256 of everything it is drawn from:

- the drawing code: the files of the module that draws it and of every ``fyexp`` module it imports, directly or
  through them (:func:`code_version`, static, from the source), the data files beside those modules (the paper's
  values in ``fyexp/reference/``), and the versions of matplotlib, pandas and numpy;
- the rows: for a table, the compared cells and their caption's facts (:func:`table_key`); for a figure, the
  experiment's rows (status ``ok``), the rows of each other experiment it read, and every file of the experiment's
  folder that is not itself a row or an output (artifacts, study files: :func:`folder_files`).

The manifest ``results/report-manifest.json`` (:class:`Manifest`; tracked, sorted JSON, no times) holds per output
its key, the files it wrote with their SHA-256, the other experiments it read and what the index needs of it.  An
output is skipped when its key matches and every file it wrote is there with the same bytes; else it is drawn and
its entry replaced.  A damaged manifest is one warning line and an empty cache (everything is drawn).
``fyexp report --no-cache`` draws everything.  Drawing is deterministic, so a drawn output has the same bytes as the
one it replaces: deleting the manifest and reporting again changes no file (tests/report/test_report_cache.py).
"""

from __future__ import annotations

import functools
import hashlib
import json
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pandas as pd

from fyexp.store.provenance.source import imports_of

MANIFEST = "report-manifest.json"
PACKAGE_ROOT = Path(__file__).resolve().parents[2]   # the folder holding the fyexp package
FORMAT = 1
# the folders and files of an experiment that are rows (read as the frame) or outputs of the report, not a
# figure's inputs
NOT_INPUTS = ("cells", "superseded", "figures", "tables", "results.csv", "NOTES.md")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _digest(parts: list) -> str:
    return sha256_bytes(json.dumps(parts, sort_keys=True, default=str, separators=(",", ":")).encode("utf-8"))


# ---- the drawing code ----------------------------------------------------------------------------------------
def _module_file(name: str) -> Path | None:
    base = PACKAGE_ROOT.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@functools.lru_cache(maxsize=None)
def code_files(module: str) -> tuple[Path, ...]:
    """The files of ``module`` and of every ``fyexp`` module it imports, directly or through them (the report's own
    modules included: :func:`fyexp.store.provenance.source.imports_of`), with the data files (not ``.py``) of each of
    their folders; sorted."""
    seen: dict[str, Path] = {}
    todo = [module]
    while todo:
        name = todo.pop()
        path = None if name in seen else _module_file(name)
        if path is not None:
            seen[name] = path
            todo += sorted(imports_of(path, name) - set(seen))
    files = set(seen.values())
    for folder in {p.parent for p in seen.values()}:
        files |= {p for p in folder.iterdir() if p.is_file() and p.suffix not in (".py", ".pyc")}
    return tuple(sorted(files))


@functools.lru_cache(maxsize=None)
def code_version(module: str) -> str:
    """SHA-256 of :func:`code_files` of ``module`` (their paths inside the package and bytes) and of the versions of
    the libraries that draw and format (matplotlib, pandas, numpy)."""
    from importlib.metadata import version

    files = [(p.relative_to(PACKAGE_ROOT).as_posix(), sha256_bytes(p.read_bytes())) for p in code_files(module)]
    return _digest([files, [(lib, version(lib)) for lib in ("matplotlib", "pandas", "numpy")]])


# ---- the rows and files ----------------------------------------------------------------------------------------
def frame_digest(frame: pd.DataFrame | None) -> str:
    """SHA-256 of a frame's columns, dtypes, index and values, row by row in order (pandas' own hashing of each row,
    fixed key: the same frame gives the same digest in every process)."""
    if frame is None:
        return "none"
    rows = pd.util.hash_pandas_object(frame, index=True, categorize=False).to_numpy().tobytes()
    return _digest([[str(c) for c in frame.columns], [str(t) for t in frame.dtypes], sha256_bytes(rows)])


def folder_files(folder: Path) -> list[tuple[str, str]]:
    """``(path inside folder, SHA-256)`` of every file of an experiment's folder that a figure may read besides its
    rows: all but :data:`NOT_INPUTS` and temporary files (``.*.tmp``)."""
    if not folder.is_dir():
        return []
    out = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if rel.parts[0] in NOT_INPUTS or not path.is_file() or (path.name.startswith(".") and path.suffix == ".tmp"):
            continue
        out.append((rel.as_posix(), sha256_bytes(path.read_bytes())))
    return out


def table_key(table: Any, title: str) -> str:
    """The key of a compared table's Markdown and LaTeX (:class:`fyexp.report.tables.ComparedTable`): its code, the
    title, every scalar field and the digests of its frames."""
    fields = {name: frame_digest(value) if isinstance(value, pd.DataFrame) or value is None else repr(value)
              for name, value in vars(table).items()}
    return _digest(["table", code_version("fyexp.report.tables"), title, fields])


def figure_key(name: str, options: dict, module: str, frame_digest_: str, loaded: dict[str, str],
               files: list[tuple[str, str]]) -> str:
    """The key of one ``plots:`` entry: its name and options, the code of its module, the digest of the experiment's
    rows, of each other experiment's rows it read (``loaded``: name → digest) and the folder's input files."""
    return _digest(["figure", name, options, code_version(module), frame_digest_, sorted(loaded.items()), files])


# ---- what a drawing wrote --------------------------------------------------------------------------------------
_WRITTEN: list[list[Path]] = []


@contextmanager
def recording() -> Iterator[list[Path]]:
    """Collect the files written through :func:`written` while the block runs (figures and notes)."""
    found: list[Path] = []
    _WRITTEN.append(found)
    try:
        yield found
    finally:
        _WRITTEN.pop()


def written(path: Path) -> Path:
    """Note that the report wrote ``path`` (:func:`fyexp.report.figures.output.save_figure` and the text outputs of
    figure functions call it)."""
    for found in _WRITTEN:
        found.append(Path(path))
    return Path(path)


def write_text_if_changed(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically unless the file already holds exactly it (its time is then kept)."""
    from fyexp.store.io import atomic_write_text

    path = Path(path)
    data = text.encode("utf-8")
    if not (path.is_file() and path.stat().st_size == len(data) and path.read_bytes() == data):
        atomic_write_text(path, text)
    return written(path)


# ---- the manifest ----------------------------------------------------------------------------------------------
class Manifest:
    """The entries of ``<results>/report-manifest.json``: entry id → ``{"key", "files": {path: sha256}, ...}``, the
    paths relative to the results folder.  ``enabled=False`` (``--no-cache``) matches nothing, so every output is
    drawn; the manifest is still written, for the next report."""

    def __init__(self, results_dir: Path, enabled: bool = True):
        self.root = Path(results_dir)
        self.path = self.root / MANIFEST
        self.enabled = enabled
        self.entries: dict[str, dict] = self._read() if enabled else {}
        self.seen: set[str] = set()

    def _read(self) -> dict[str, dict]:
        from fyexp.store.damaged import read_json, warn_damaged

        if not self.path.is_file():
            return {}
        data, problem = read_json(self.path)
        if problem is None:
            problem = _manifest_problem(data)
        if problem is not None:
            warn_damaged(self.path, "damaged report manifest", problem, "every table and figure is drawn again")
            return {}
        return data["entries"]

    def rel(self, path: Path) -> str:
        path = Path(path)
        try:
            return path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return path.as_posix()

    def lookup(self, entry_id: str, key: str) -> dict | None:
        """The entry recorded for ``entry_id`` if its key is ``key`` and every file it wrote is there, unchanged."""
        entry = self.entries.get(entry_id)
        if not self.enabled or entry is None or entry.get("key") != key:
            return None
        for rel, digest in entry["files"].items():
            path = self.root / rel
            if not path.is_file() or sha256_bytes(path.read_bytes()) != digest:
                return None
        self.seen.add(entry_id)
        return entry

    def record(self, entry_id: str, key: str, files: list[Path], **extra: Any) -> dict:
        entry = {"key": key, "files": {self.rel(p): sha256_bytes(Path(p).read_bytes())
                                       for p in dict.fromkeys(files) if Path(p).is_file()}, **extra}
        self.entries[entry_id] = entry
        self.seen.add(entry_id)
        return entry

    def forget_unseen(self, prefixes: list[str]) -> None:
        """Drop the entries under ``prefixes`` (e.g. ``"table:nvdm/"``) that this report did not produce."""
        for entry_id in [e for e in self.entries if e not in self.seen and e.startswith(tuple(prefixes))]:
            del self.entries[entry_id]

    def save(self) -> None:
        text = json.dumps({"format": FORMAT, "entries": self.entries}, indent=1, sort_keys=True,
                          ensure_ascii=False) + "\n"
        write_text_if_changed(self.path, text)


def cached(manifest: Manifest | None, entry_id: str, key: str, draw) -> tuple[list[Path], dict]:
    """``(files, entry)``: those recorded for ``entry_id`` when its key matches (:meth:`Manifest.lookup`), else
    those ``draw()`` writes (it returns ``(files, facts)``; the facts, e.g. a table's status, are recorded with the
    files under ``key``).  Without a manifest, ``draw()``'s files and facts."""
    if manifest is None:
        files, extra = draw()
        return list(files), extra
    entry = manifest.lookup(entry_id, key)
    if entry is None:
        with recording() as wrote:
            files, extra = draw()
        entry = manifest.record(entry_id, key, wrote + list(files), **extra)
    return [manifest.root / rel for rel in entry["files"]], entry


def _manifest_problem(data: object) -> str | None:
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("entries"), dict):
        return f"not a JSON object of format {FORMAT} with 'entries'"
    for entry_id, entry in data["entries"].items():
        if not (isinstance(entry, dict) and isinstance(entry.get("key"), str) and isinstance(entry.get("files"), dict)
                and all(isinstance(k, str) and isinstance(v, str) and ".." not in Path(k).parts
                        and not Path(k).is_absolute() for k, v in entry["files"].items())):
            return f"entry '{entry_id}' is not {{key, files: {{path inside the folder: sha256}}}}"
        for field in ("pngs", "reads"):
            if not isinstance(entry.get(field, []), list) or not all(isinstance(v, str) for v in entry.get(field, [])):
                return f"entry '{entry_id}': '{field}' is not a list of strings"
        cells = entry.get("cells", [])
        if not isinstance(cells, list) or not all(isinstance(c, list) and len(c) == 4
                                                  and all(isinstance(v, str) for v in c) for c in cells):
            return f"entry '{entry_id}': 'cells' is not a list of [setting, row, column, text]"
        if not set(entry.get("pngs", [])) <= set(entry["files"]):
            return f"entry '{entry_id}': a figure it lists is not among its files"
    return None
