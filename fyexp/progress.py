"""Progress of a run: a live bar on a terminal, plain lines otherwise; neither can take a run down.

A run reports through one small interface (:class:`RunProgress`): ``start(total)``, ``cell_started(key)``,
``cell_finished(key, status, seconds)``, ``subtask(description, total, unit) -> advance(n, **fields)`` for nested
work counted in ``unit`` (training steps, EM iterations, fits), ``note(text)`` and ``stop()``.

* The current cell is shown by what tells it apart from the run's other cells (:func:`cell_labels`: the grid
  values that vary and the seed), so that at 80 columns ``iwae K=50 mnist fold=3 seed=0`` shows rather than the
  first characters of its key.

* :class:`LiveProgress` draws rich bars.  Every call into rich is guarded: if the display raises (a broken
  terminal, a bug in a column), it is stopped, one warning line is printed, and the run goes on with
  :class:`LineProgress`.  A cell's result never depends on the display.
* :class:`LineProgress` prints one plain line when a cell starts and when it ends (with its wall time and the
  run's ETA), and a heartbeat for long nested work at most every ``heartbeat_s`` seconds, so ``--no-progress``
  and piped output still show that the run is alive.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from rich.console import Console
from rich.markup import escape
from rich.progress import (BarColumn, Progress, ProgressColumn, SpinnerColumn, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)
from rich.table import Column

Advance = Callable[..., None]


def _noop(*args: Any, **kwargs: Any) -> None:
    return None


def _eta(done: int, total: int, elapsed: float) -> str:
    if not done or done >= total:
        return ""
    remaining = elapsed / done * (total - done)
    return f", ETA {remaining / 60:.1f} min" if remaining >= 60 else f", ETA {remaining:.0f} s"


def _split_key(key: str) -> tuple[str, dict[str, str]]:
    """``method__a=1__b=x__seed=0`` → ``("method", {"a": "1", "b": "x", "seed": "0"})``."""
    parts = key.split("__")
    method = parts[0] if "=" not in parts[0] else ""
    params = dict(p.split("=", 1) for p in parts if "=" in p)
    return method, params


def cell_labels(keys) -> dict[str, str]:
    """Per cell key, what tells it apart from the other ``keys``: its method if methods differ, then each grid
    value that differs between cells (``K=50``; a data set by its name alone), then its seed if seeds differ.
    A key alone (or keys that differ in nothing parsed) is its own label."""
    split = {k: _split_key(k) for k in keys}
    methods = {m for m, _ in split.values()}
    names = list(dict.fromkeys(n for _, params in split.values() for n in params))
    varying = [n for n in names if len({params.get(n) for _, params in split.values()}) > 1]
    labels = {}
    for key, (method, params) in split.items():
        words = [method] if len(methods) > 1 and method else []
        for name in varying:
            if name in params and name != "seed":
                words.append(params[name] if name == "dataset" else f"{name}={params[name]}")
        if "seed" in varying and "seed" in params:
            words.append(f"seed={params['seed']}")
        labels[key] = " ".join(words) or key
    return labels


class CountColumn(ProgressColumn):
    """``84/200 steps``: the task's completed and total counts with its unit (a ``unit`` field)."""

    def render(self, task):
        from rich.text import Text

        total = "?" if task.total is None else f"{task.total:g}"
        unit = task.fields.get("unit", "")
        return Text(f"{task.completed:g}/{total}" + (f" {unit}" if unit else ""), style="progress.download")


def progress_columns() -> list[ProgressColumn]:
    """The live bar's columns: the counts (with their unit), elapsed time and ETA keep their full width at any
    terminal width; the decorations share what is left (description 5 : bar 1 : info 3) and are cut with "…"
    first.  The run's row shows the current cell's label in its description; a nested row its unit's counts and
    its fields (epoch, loss) as info.

    rich fits a table by shrinking its flexible (``ratio``) columns only, so the fixed columns always show whole.
    """
    def flexible(ratio: int) -> Column:
        return Column(ratio=ratio, no_wrap=True, overflow="ellipsis", min_width=1)

    fixed = Column(no_wrap=True)
    return [SpinnerColumn(table_column=fixed),
            TextColumn("[bold]{task.description}", table_column=flexible(5)),
            BarColumn(bar_width=None, table_column=flexible(1)),
            CountColumn(table_column=fixed), TimeElapsedColumn(table_column=fixed),
            TextColumn("ETA", table_column=fixed), TimeRemainingColumn(table_column=fixed),
            TextColumn("{task.fields[info]}", table_column=flexible(3))]


class RunProgress:
    """The interface a run reports through (this base class reports nothing)."""

    def start(self, title: str, total: int, unit: str = "cells") -> None:
        """The run starts ``total`` cells (or other ``unit``: a tuning study's workers)."""

    def cell_started(self, key: str) -> None:
        """A cell starts."""

    def cell_finished(self, key: str, status: str, seconds: float) -> None:
        """A cell ended with ``status`` ('ok' or 'failed')."""

    def subtask(self, description: str, total: float | None, unit: str = "steps") -> Advance:
        """Nested work of ``total`` ``unit`` inside the current cell; returns ``advance(n=1, **fields)``."""
        return _noop

    def note(self, text: str) -> None:
        """A line of text (plain, never read as markup)."""

    def stop(self) -> None:
        """The run ended (normally or not)."""


class LineProgress(RunProgress):
    """Plain lines on ``console``: one per cell start and end, a heartbeat for long nested work."""

    def __init__(self, console: Console, heartbeat_s: float = 30.0):
        self.console = console
        self.heartbeat_s = heartbeat_s
        self.title, self.total, self.done, self.started, self.t0 = "", 0, 0, 0, time.perf_counter()

    def _print(self, text: str) -> None:
        self.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def start(self, title: str, total: int, unit: str = "cells") -> None:
        self.title, self.total, self.done, self.started, self.t0 = title, total, 0, 0, time.perf_counter()
        self._print(f"{title}: {total} {'cell(s)' if unit == 'cells' else unit} to run")

    def cell_started(self, key: str) -> None:
        self.started += 1
        self._print(f"[{self.started}/{self.total}] {key} ...")

    def cell_finished(self, key: str, status: str, seconds: float) -> None:
        self.done += 1
        eta = _eta(self.done, self.total, time.perf_counter() - self.t0)
        self._print(f"[{self.done}/{self.total}] {key} {status} in {seconds:.1f} s{eta}")

    def subtask(self, description: str, total: float | None, unit: str = "steps") -> Advance:
        state = {"n": 0.0, "last": time.perf_counter()}

        def advance(n: float = 1, **fields: Any) -> None:
            state["n"] += n
            now = time.perf_counter()
            if now - state["last"] >= self.heartbeat_s:
                state["last"] = now
                of = f"/{total:g}" if total else ""
                info = f" {fields['info']}" if fields.get("info") else ""
                self._print(f"    {description}: {state['n']:g}{of} {unit}{info}")

        return advance

    def note(self, text: str) -> None:
        self._print(text)


class LiveProgress(RunProgress):
    """Rich bars (the run's bar and one per nested task); falls back to :class:`LineProgress` if rich fails."""

    def __init__(self, console: Console, keys=()):
        self.console = console
        self.fallback: LineProgress | None = None
        self.progress = Progress(*progress_columns(), console=console, transient=False, expand=True)
        self.task = None
        self.labels = cell_labels(keys)
        self.current = ""

    def _guard(self, call: Callable[[], Any], replay: Callable[[RunProgress], Any]) -> Any:
        """Run a rich call; on any error switch to plain lines for the rest of the run and replay there."""
        if self.fallback is None:
            try:
                return call()
            except Exception as exc:  # the display must never take the run down
                try:
                    self.progress.stop()
                except Exception:
                    pass
                self.fallback = LineProgress(self.console)
                self.fallback.note(f"warning: progress display failed ({type(exc).__name__}: {exc}); "
                                   f"continuing with plain progress lines")
                self.fallback.title, self.fallback.total = self._title, self._total
                self.fallback.done = self.fallback.started = self._done
        return replay(self.fallback)

    def start(self, title: str, total: int, unit: str = "cells") -> None:
        self._title, self._total, self._done = title, total, 0

        def call():
            self.progress.console.print(f"{title}: {total} {'cell(s)' if unit == 'cells' else unit} to run",
                                        markup=False, highlight=False)
            self.progress.start()
            self.task = self.progress.add_task(escape(title), total=total, info="", unit=unit)
        self._guard(call, lambda p: p.start(title, total, unit))

    def cell_started(self, key: str) -> None:
        self.current = key
        label = self.labels.get(key, key)
        self._guard(lambda: self.progress.update(self.task, description=escape(label)),
                    lambda p: p.cell_started(key))

    def cell_finished(self, key: str, status: str, seconds: float) -> None:
        self._done += 1

        def call():
            if status != "ok":
                self.progress.console.print(f"cell {key} {status}", markup=False, highlight=False)
            self.progress.advance(self.task)

        def replay(p: RunProgress):
            p.cell_finished(key, status, seconds)
        self._guard(call, replay)

    def subtask(self, description: str, total: float | None, unit: str = "steps") -> Advance:
        if self.fallback is not None:
            return self.fallback.subtask(description, total, unit)
        # the cell is named on the run's row: a nested row that repeats its key shows only "└"
        shown = "└" if self.current and self.current in description else f"└ {description}"
        try:
            task = self.progress.add_task(escape(shown), total=total, info="", unit=unit)
        except Exception:
            return self._guard(lambda: (_ for _ in ()).throw(RuntimeError("add_task failed")),
                               lambda p: p.subtask(description, total, unit))
        fallback_advance: list[Advance] = []
        state = {"n": 0.0, "removed": False}

        def advance(n: float = 1, **fields: Any) -> None:
            if self.fallback is not None:
                if not fallback_advance:
                    fallback_advance.append(self.fallback.subtask(description, total, unit))
                fallback_advance[0](n, **fields)
                return
            if state["removed"]:
                return
            state["n"] += n

            def call():
                if "info" in fields:
                    fields["info"] = escape(str(fields["info"]))
                self.progress.update(task, advance=n, **fields)
                if total is not None and state["n"] >= total:
                    state["removed"] = True
                    self.progress.remove_task(task)
            self._guard(call, lambda p: None)

        return advance

    def note(self, text: str) -> None:
        self._guard(lambda: self.progress.console.print(text, markup=False, highlight=False),
                    lambda p: p.note(text))

    def stop(self) -> None:
        if self.fallback is None:
            try:
                self.progress.stop()
            except Exception:
                pass


def make_progress(console: Console, live: bool, keys=()) -> RunProgress:
    """A live display when asked for and ``console`` is a terminal, else plain lines; ``keys``: the cells the run
    will start (their :func:`cell_labels` name the current cell on the live bar)."""
    if live and console.is_terminal:
        return LiveProgress(console, keys)
    return LineProgress(console)
