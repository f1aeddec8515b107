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

import contextlib
import io
import os
import sys
import textwrap
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


def wrapped(text: str, width: int) -> list[str]:
    """``text`` as lines of at most ``width`` characters, each of its lines wrapped between words (``textwrap``;
    a word longer than ``width``, such as a path, is kept whole), continuation lines indented two spaces more than
    their line.  An empty text is one empty line."""
    lines: list[str] = []
    for line in text.split("\n"):
        if len(line) <= width:
            lines.append(line)
            continue
        indent = line[:len(line) - len(line.lstrip())]
        lines += textwrap.wrap(line, width=max(width, len(indent) + 12), subsequent_indent=indent + "  ",
                               break_long_words=False, break_on_hyphens=False) or [line]
    return lines


def plain_line(console: Console, text: str) -> None:
    """Print ``text`` as it is (never read as rich markup) on ``console``: on a terminal wrapped between words at
    its width (:func:`wrapped`; the terminal would break it mid-word), elsewhere (a pipe, a file: read by scripts
    and tests) each line whole.  An error (``error: ...``) is one line everywhere: one line per error is the CLI's
    rule (tests/cli/test_e2e.py), and a terminal that wraps it still gives it whole to a copy."""
    if console.is_terminal and not text.startswith("error: "):   # an error stays one line (the terminal wraps it)
        text = "\n".join(wrapped(text, console.width))
    console.print(text, markup=False, highlight=False, soft_wrap=True)


def _split_key(key: str) -> tuple[str, dict[str, str]]:
    """``method__a=1__b=x__seed=0`` → ``("method", {"a": "1", "b": "x", "seed": "0"})``."""
    parts = key.split("__")
    method = parts[0] if "=" not in parts[0] else ""
    params = dict(p.split("=", 1) for p in parts if "=" in p)
    return method, params


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _distinct_parts(values: set[str]) -> dict[str, str]:
    """Each value without the prefix all ``values`` share up to a ``-`` or ``_`` (``bernoulli-biweight``,
    ``bernoulli-gaussian`` → ``biweight``, ``gaussian``); the values themselves where nothing is shared."""
    prefix = os.path.commonprefix(sorted(values)) if len(values) > 1 else ""
    cut = max(prefix.rfind("-"), prefix.rfind("_")) + 1
    return {v: v[cut:] or v for v in values}


def cell_labels(keys) -> dict[str, str]:
    """Per cell key, what tells it apart from the other ``keys``, short: its method if methods differ, then each
    grid value that differs between cells (a number with its name, ``K=50``; a word alone, ``mnist``,
    ``authors``), then its seed if seeds differ.  Methods, and the words of one axis, lose the prefix they all
    share (``bernoulli-``).  A key alone (or keys that differ in nothing parsed) is its own label."""
    split = {k: _split_key(k) for k in keys}
    methods = _distinct_parts({m for m, _ in split.values() if m})
    names = list(dict.fromkeys(n for _, params in split.values() for n in params))
    varying = [n for n in names if len({params.get(n) for _, params in split.values()}) > 1]
    words_of = {n: _distinct_parts({p[n] for _, p in split.values() if n in p}) for n in varying}
    labels = {}
    for key, (method, params) in split.items():
        words = [methods[method]] if len(methods) > 1 and method else []
        for name in varying:
            if name in params and name != "seed":
                value = params[name]
                words.append(f"{name}={value}" if _is_number(value) or value in ("True", "False", "None")
                             else words_of[name][value])
        if "seed" in varying and "seed" in params:
            words.append(f"seed={params['seed']}")
        labels[key] = " ".join(words) or key
    return labels


def fit_label(label: str, width: int) -> str:
    """``label`` in at most ``width`` characters with every word kept in part: the longest words are cut first,
    each to a common length with "…" (a ``name=value`` word loses letters of its name, never of its value), so
    the last words (``authors`` / ``fy``) still show where cutting the end of the label would drop them."""
    if len(label) <= width:
        return label
    words = label.split(" ")

    def cut(word: str, cap: int) -> str:
        if len(word) <= cap:
            return word
        name, sep, value = word.rpartition("=")
        if sep and name:
            keep = max(1, cap - len(value) - 2)
            return f"{name[:keep]}…={value}" if keep < len(name) else word
        return word[:max(1, cap - 1)] + "…"

    for cap in range(max(len(w) for w in words), 1, -1):
        fitted = " ".join(cut(w, cap) for w in words)
        if len(fitted) <= width:
            return fitted
    fitted = " ".join(cut(w, 2) for w in words)
    return fitted if len(fitted) <= width else fitted[:max(1, width - 1)] + "…"


class CellLabel:
    """The current cell's label on the live bar, fitted to the width rich gives its column (:func:`fit_label`)."""

    def __init__(self, label: str):
        self.label = label

    def __rich_measure__(self, console, options):
        from rich.measure import Measurement

        return Measurement(1, len(self.label))

    def __rich_console__(self, console, options):
        from rich.text import Text

        yield Text(fit_label(self.label, options.max_width), style="bold", no_wrap=True, overflow="ellipsis")


class LabelColumn(ProgressColumn):
    """The description column: a task's ``label`` field (the current cell) fitted to the column, else its
    description as rich markup."""

    def render(self, task):
        from rich.text import Text

        label = task.fields.get("label")
        return CellLabel(label) if label else Text.from_markup(f"[bold]{task.description}", overflow="ellipsis")


class RemainingColumn(TimeRemainingColumn):
    """The ETA: rich's, from its recent speed, and where it has none (steps come in bursts further apart than its
    30-s window) the task's average rate so far, ``elapsed / completed × (total − completed)``."""

    def render(self, task):
        from datetime import timedelta

        from rich.text import Text

        if task.speed is None and task.total and task.completed and task.elapsed and not task.finished:
            remaining = task.elapsed / task.completed * (task.total - task.completed)
            return Text(str(timedelta(seconds=max(0, int(remaining)))), style="progress.remaining")
        return super().render(task)


class CountColumn(ProgressColumn):
    """``84/200 steps``: the task's completed and total counts with its unit (a ``unit`` field)."""

    def render(self, task):
        from rich.text import Text

        total = "?" if task.total is None else f"{task.total:g}"
        unit = task.fields.get("unit", "")
        return Text(f"{task.completed:g}/{total}" + (f" {unit}" if unit else ""), style="progress.download")


def progress_columns() -> list[ProgressColumn]:
    """The live bar's columns: the counts (with their unit), elapsed time and ETA keep their full width at any
    terminal width; the decorations share what is left (description 6 : bar 1 : info 2) and are cut with "…"
    first (the current cell's label word by word, :func:`fit_label`).  The run's row shows the current cell's label in its description; a nested row its unit's counts and
    its fields (epoch, loss) as info.

    rich fits a table by shrinking its flexible (``ratio``) columns only, so the fixed columns always show whole.
    """
    def flexible(ratio: int) -> Column:
        return Column(ratio=ratio, no_wrap=True, overflow="ellipsis", min_width=1)

    fixed = Column(no_wrap=True)
    return [SpinnerColumn(table_column=fixed),
            LabelColumn(table_column=flexible(6)),
            BarColumn(bar_width=None, table_column=flexible(1)),
            CountColumn(table_column=fixed), TimeElapsedColumn(table_column=fixed),
            TextColumn("ETA", table_column=fixed), RemainingColumn(table_column=fixed),
            TextColumn("{task.fields[info]}", table_column=flexible(2))]


ECHO_MARGIN = 2  # columns the live bars leave free at the right: the terminal's "^C" echo fits there


class BarsProgress(Progress):
    """rich's :class:`~rich.progress.Progress`, its bars :data:`ECHO_MARGIN` columns narrower than the terminal.

    On Ctrl-C the terminal echoes "^C" at the cursor, the end of the last bar: on a full-width bar that wraps the
    cursor to a new line, and the final redraw (which moves up from the cursor) printed the bars a second time."""

    def make_tasks_table(self, tasks):
        table = super().make_tasks_table(tasks)
        live = getattr(self, "live", None)  # absent while rich builds the first frame, inside __init__
        if live is not None:
            table.width = max(20, live.console.width - ECHO_MARGIN)
        return table


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
        plain_line(self.console, text)

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
        self.progress = BarsProgress(*progress_columns(), console=console, transient=False, expand=True)
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
            self.task = self.progress.add_task(escape(title), total=total, info="", unit=unit, label="")
        self._guard(call, lambda p: p.start(title, total, unit))

    def cell_started(self, key: str) -> None:
        self.current = key
        label = self.labels.get(key, key)
        self._guard(lambda: self.progress.update(self.task, label=label), lambda p: p.cell_started(key))

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


# ---- a table of lines (fyexp claims) -----------------------------------------------------------------------------
TABLE_WIDTH = 100  # a table's width when piped without $COLUMNS
MIN_TABLE_WIDTH = 40  # no narrower: a terminal narrower than this is laid out at 40 and wraps in the terminal


def table_width(console: Console) -> int:
    """The width a table is laid out at: a terminal's own; piped, ``$COLUMNS`` where it is a number, else
    :data:`TABLE_WIDTH`; never under :data:`MIN_TABLE_WIDTH`."""
    if console.is_terminal:
        return max(MIN_TABLE_WIDTH, console.width)
    columns = os.environ.get("COLUMNS", "")
    return max(MIN_TABLE_WIDTH, int(columns)) if columns.isdigit() else TABLE_WIDTH


def print_lines(lines: list[tuple[str, str | None]], console: Console, width: int) -> None:
    """``(text, style)`` lines on ``console``, folded at ``width``; piped, on a console of that width that raises
    :class:`BrokenPipeError` when the reader leaves (rich would exit 1; the caller ends quietly)."""
    from rich.text import Text

    class Piped(Console):
        def on_broken_pipe(self) -> None:
            raise BrokenPipeError

    if not console.is_terminal:
        console = Piped(width=width, soft_wrap=False)
    if lines:   # one print of the joined lines: the same output as a print per line, in half the time
        console.print(Text("\n").join(Text(line, style=style) for line, style in lines), no_wrap=False,
                      overflow="fold", crop=False, width=width)


def emit_answer(answer: str | list, console: Console, width: int) -> None:
    """A command's answer on stdout: a text as it is (JSON), or :func:`print_lines`; a reader that leaves (``| head``)
    ends it quietly, exit 0 (what is still buffered goes to ``/dev/null`` instead of failing at exit)."""
    try:
        if isinstance(answer, str):
            print(answer)
        else:
            print_lines(answer, console, width)
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def with_stderr(judge: Callable, *args):
    """``judge(*args)`` and the text it wrote on stderr (which still goes there as it comes)."""
    kept, real = io.StringIO(), sys.stderr

    class Tee(io.TextIOBase):
        def write(self, text: str) -> int:
            kept.write(text)
            return real.write(text)

        def flush(self) -> None:
            real.flush()

    with contextlib.redirect_stderr(Tee()):
        answer = judge(*args)
    return answer, kept.getvalue()
