"""Progress of a run (:class:`RunProgress`): a live bar on a terminal, plain lines otherwise; neither can take a run
down.  :class:`LineProgress` prints a line per cell start and end and a heartbeat for long nested work (so piped
output shows the run is alive); :class:`LiveProgress` draws rich bars naming the current cell by what tells it apart
(:func:`cell_labels`), and falls back to plain lines when the display raises: a result never depends on it."""

from __future__ import annotations

import contextlib
import functools
import io
import os
import sys
import textwrap
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Callable

from rich.console import Console
from rich.measure import Measurement
from rich.progress import (BarColumn, Progress, ProgressColumn, SpinnerColumn, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)
from rich.table import Column
from rich.text import Text

Advance = Callable[..., None]


def wrapped(text: str, width: int) -> list[str]:
    """``text``'s lines wrapped between words at ``width`` (a longer word, a path, kept whole), continuations
    indented two spaces more than their line."""
    lines: list[str] = []
    for line in text.split("\n"):
        indent = line[:len(line) - len(line.lstrip())]
        lines += [line] if len(line) <= width else textwrap.wrap(
            line, width=max(width, len(indent) + 12), subsequent_indent=indent + "  ", break_long_words=False,
            break_on_hyphens=False) or [line]
    return lines


def say(console: Console, text: str) -> None:
    """Print ``text`` as it is (no markup): on a terminal wrapped between words (it would break them), elsewhere
    (scripts, tests) each line whole; an error (``error: ...``) is one line everywhere (the CLI's rule)."""
    if console.is_terminal and not text.startswith("error: "):
        text = "\n".join(wrapped(text, console.width))
    console.print(text, markup=False, highlight=False, soft_wrap=True)


def _distinct_parts(values: set[str]) -> dict[str, str]:
    """Each value without the prefix all ``values`` share up to a ``-`` or ``_`` (``bernoulli-biweight`` →
    ``biweight``)."""
    prefix = os.path.commonprefix(sorted(values)) if len(values) > 1 else ""
    cut = max(prefix.rfind("-"), prefix.rfind("_")) + 1
    return {v: v[cut:] or v for v in values}


def cell_labels(keys) -> dict[str, str]:
    """Per cell key (``method__a=1__b=x__seed=0``), what tells it apart from the other ``keys``: its method, each
    grid value (a number with its name, ``K=50``; a word alone, ``mnist``) and its seed, where they differ between
    cells, without the prefix shared by all methods or words of an axis; else the key itself."""
    def named(value: str) -> bool:   # a number or a constant: shown with its name
        try:
            return float(value) is not None
        except ValueError:
            return value in ("True", "False", "None")

    split = {k: ("" if "=" in k.split("__")[0] else k.split("__")[0],
                 dict(p.split("=", 1) for p in k.split("__") if "=" in p)) for k in keys}
    methods = _distinct_parts({m for m, _ in split.values() if m})
    names = list(dict.fromkeys(n for _, params in split.values() for n in params))
    varying = [n for n in names if len({params.get(n) for _, params in split.values()}) > 1]
    words_of = {n: _distinct_parts({p[n] for _, p in split.values() if n in p}) for n in varying}
    labels = {}
    for key, (method, params) in split.items():
        words = [methods[method]] if len(methods) > 1 and method else []
        words += [f"{n}={params[n]}" if named(params[n]) else words_of[n][params[n]]
                  for n in varying if n in params and n != "seed"]
        words += [f"seed={params['seed']}"] if "seed" in varying and "seed" in params else []
        labels[key] = " ".join(words) or key
    return labels


def fit_label(label: str, width: int) -> str:
    """``label`` in at most ``width`` characters, every word kept in part (the last words, ``authors`` / ``fy``,
    still show): the longest cut first to a common length with "…", a ``name=value`` word keeping its value."""
    if len(label) <= width:
        return label
    words = label.split(" ")

    def cut(word: str, cap: int) -> str:
        name, sep, value = word.rpartition("=")
        keep = max(1, cap - len(value) - 2)  # a name=value word keeps its value whole
        if len(word) <= cap or (sep and name and keep >= len(name)):
            return word
        return f"{name[:keep]}…={value}" if sep and name else word[:max(1, cap - 1)] + "…"

    fitted = label   # split and joined again: the label itself where no word is longer than 1
    for cap in range(max(len(w) for w in words), 1, -1):
        if len(fitted := " ".join(cut(w, cap) for w in words)) <= width:
            return fitted
    return fitted[:max(1, width - 1)] + "…"


@dataclass
class CellLabel:
    """The current cell's label on the live bar, fitted to the width rich gives its column (:func:`fit_label`)."""

    label: str

    def __rich_measure__(self, console, options):
        return Measurement(1, len(self.label))

    def __rich_console__(self, console, options):
        yield Text(fit_label(self.label, options.max_width), style="bold", no_wrap=True, overflow="ellipsis")


class LabelColumn(ProgressColumn):
    """A task's ``label`` (the current cell, :class:`CellLabel`), else its description cut with "…"."""

    def render(self, task):
        label = task.fields.get("label")
        return CellLabel(label) if label else Text(task.description, style="bold", overflow="ellipsis")


class RemainingColumn(TimeRemainingColumn):
    """The ETA: rich's from its recent speed, else (steps in bursts further apart than its 30-s window) from the
    average rate, ``elapsed / completed × (total − completed)``."""

    def render(self, task):
        if task.speed is None and task.total and task.completed and task.elapsed and not task.finished:
            remaining = task.elapsed / task.completed * (task.total - task.completed)
            return Text(str(timedelta(seconds=max(0, int(remaining)))), style="progress.remaining")
        return super().render(task)


ECHO_MARGIN = 2  # columns the live bars leave free at the right: the terminal's "^C" echo fits there


class BarsProgress(Progress):
    """The live bars, :data:`ECHO_MARGIN` columns narrower than the terminal (a "^C" echoed after a full-width bar
    wrapped the cursor: the bars were printed twice).  Counts (``84/200 steps``), elapsed time and ETA keep their
    width; the label, bar and info (a nested row's fields: epoch, loss) share the rest 6 : 1 : 2."""

    def __init__(self, console: Console):
        def flexible(ratio: int) -> Column:
            return Column(ratio=ratio, no_wrap=True, overflow="ellipsis", min_width=1)

        fixed = Column(no_wrap=True)
        super().__init__(SpinnerColumn(table_column=fixed), LabelColumn(table_column=flexible(6)),
                         BarColumn(bar_width=None, table_column=flexible(1)),
                         TextColumn("{task.completed:g}/{task.total:g} {task.fields[unit]}", markup=False,
                                    style="progress.download", table_column=fixed),
                         TimeElapsedColumn(table_column=fixed), TextColumn("ETA", table_column=fixed),
                         RemainingColumn(table_column=fixed),
                         TextColumn("{task.fields[info]}", markup=False, table_column=flexible(2)), console=console,
                         expand=True)

    def make_tasks_table(self, tasks):
        table = super().make_tasks_table(tasks)
        live = getattr(self, "live", None)  # absent while rich builds the first frame, inside __init__
        if live is not None:
            table.width = max(20, live.console.width - ECHO_MARGIN)
        return table


class RunProgress:
    """What a run reports through; this base class reports nothing.  ``unit``: what ``start``'s total counts (cells,
    a tuning study's workers) or a ``subtask``'s (steps, iterations, fits); ``advance(n, **fields)`` moves a subtask."""

    def start(self, title: str, total: int, unit: str = "cells") -> None: ...

    def cell_started(self, key: str) -> None: ...

    def cell_finished(self, key: str, status: str, seconds: float) -> None: ...   # status: 'ok' or 'failed'

    def subtask(self, description: str, total: float | None, unit: str = "steps") -> Advance:
        return lambda *args, **fields: None

    def note(self, text: str) -> None: ...   # a line of plain text, never read as markup

    def stop(self) -> None: ...   # the run ended, normally or not


class LineProgress(RunProgress):
    """Plain lines on ``console`` (:func:`say`): one per cell start and end, a heartbeat for long nested work."""

    def __init__(self, console: Console, heartbeat_s: float = 30.0):
        self.console, self.heartbeat_s = console, heartbeat_s
        self.total = self.done = self.started = 0
        self.t0 = time.perf_counter()

    def start(self, title: str, total: int, unit: str = "cells") -> None:
        self.total, self.done, self.started, self.t0 = total, 0, 0, time.perf_counter()
        self.note(f"{title}: {total} {'cell(s)' if unit == 'cells' else unit} to run")

    def cell_started(self, key: str) -> None:
        self.started += 1
        self.note(f"[{self.started}/{self.total}] {key} ...")

    def cell_finished(self, key: str, status: str, seconds: float) -> None:
        self.done += 1
        remaining = (time.perf_counter() - self.t0) / self.done * (self.total - self.done)
        eta = "" if self.done >= self.total else (f", ETA {remaining / 60:.1f} min" if remaining >= 60
                                                  else f", ETA {remaining:.0f} s")
        self.note(f"[{self.done}/{self.total}] {key} {status} in {seconds:.1f} s{eta}")

    def subtask(self, description: str, total: float | None, unit: str = "steps") -> Advance:
        state = {"n": 0.0, "last": time.perf_counter()}

        def advance(n: float = 1, **fields: Any) -> None:
            state["n"] += n
            if (now := time.perf_counter()) - state["last"] >= self.heartbeat_s:
                state["last"] = now
                info = f" {fields['info']}" if fields.get("info") else ""
                self.note(f"    {description}: {state['n']:g}{f'/{total:g}' if total else ''} {unit}{info}")

        return advance

    def note(self, text: str) -> None:
        say(self.console, text)


def _guarded(method: Callable) -> Callable:
    """A :class:`LiveProgress` method: on any error the display is given up (:meth:`LiveProgress.fall_back`) and this
    call, like every later one, is :class:`LineProgress`'s."""
    @functools.wraps(method)
    def call(self: LiveProgress, *args: Any, **kwargs: Any) -> Any:
        if self.fallback is None:
            try:
                return method(self, *args, **kwargs)
            except Exception as exc:  # the display must never take the run down
                self.fall_back(exc)
        return getattr(LineProgress, method.__name__)(self, *args, **kwargs)
    return call


class LiveProgress(LineProgress):
    """Rich bars, the run's and one per nested task; plain lines once rich fails (``fallback``: its error)."""

    def __init__(self, console: Console, keys=()):
        super().__init__(console)
        self.fallback: Exception | None = None
        self.progress, self.labels, self.task, self.current = BarsProgress(console), cell_labels(keys), None, ""

    def fall_back(self, exc: Exception) -> None:
        """Stop the bars, say why in one line, go on with plain lines (the cells in flight not counted)."""
        with contextlib.suppress(Exception):
            self.progress.stop()
        self.fallback, self.started = exc, self.done
        self.note(f"warning: progress display failed ({type(exc).__name__}: {exc}); continuing with plain progress "
                  f"lines")

    @_guarded
    def start(self, title: str, total: int, unit: str = "cells") -> None:
        self.progress.start()
        self.task = self.progress.add_task(title, total=total, info="", unit=unit, label="")
        super().start(title, total, unit)   # its line printed above the bars

    @_guarded
    def cell_started(self, key: str) -> None:
        self.current = key
        self.progress.update(self.task, label=self.labels.get(key, key))

    @_guarded
    def cell_finished(self, key: str, status: str, seconds: float) -> None:
        if status != "ok":
            self.note(f"cell {key} {status}")
        self.progress.advance(self.task)
        self.done += 1

    @_guarded
    def subtask(self, description: str, total: float | None, unit: str = "steps") -> Advance:
        # the cell is named on the run's row: a nested row that repeats its key shows only "└"
        shown = "└" if self.current and self.current in description else f"└ {description}"
        task, state = self.progress.add_task(shown, total=total, info="", unit=unit), {"n": 0.0, "lines": None}

        def advance(n: float = 1, **fields: Any) -> None:
            if self.fallback is not None:  # the display failed: this task's heartbeat on plain lines from now on
                state["lines"] = state["lines"] or LineProgress.subtask(self, description, total, unit)
                state["lines"](n, **fields)
            elif total is None or state["n"] < total:   # at its total the task is removed: the rest is ignored
                state["n"] += n
                try:
                    self.progress.update(task, advance=n, **fields)
                    if total is not None and state["n"] >= total:
                        self.progress.remove_task(task)
                except Exception as exc:  # this advance is dropped; the next ones go to plain lines
                    self.fall_back(exc)

        return advance

    @_guarded
    def note(self, text: str) -> None:
        self.console.print(text, markup=False, highlight=False)

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.progress.stop()


def make_progress(console: Console, live: bool, keys=()) -> RunProgress:
    """A live display when asked for on a terminal, else plain lines; ``keys``: the cells to run (labelled)."""
    return LiveProgress(console, keys) if live and console.is_terminal else LineProgress(console)


# ---- a table of lines (fyexp claims) -----------------------------------------------------------------------------
TABLE_WIDTH = 100  # a table's width when piped without $COLUMNS
MIN_TABLE_WIDTH = 40  # no narrower: a terminal narrower than this is laid out at 40 and wraps in the terminal


def table_width(console: Console) -> int:
    """A table's width: a terminal's; piped, ``$COLUMNS`` or :data:`TABLE_WIDTH`; at least :data:`MIN_TABLE_WIDTH`."""
    if console.is_terminal:
        return max(MIN_TABLE_WIDTH, console.width)
    columns = os.environ.get("COLUMNS", "")
    return max(MIN_TABLE_WIDTH, int(columns)) if columns.isdigit() else TABLE_WIDTH


def print_lines(lines: list[tuple[str, str | None]], console: Console, width: int) -> None:
    """``(text, style)`` lines folded at ``width``; piped, a reader leaving raises :class:`BrokenPipeError` (rich
    would exit 1)."""
    class Piped(Console):
        def on_broken_pipe(self) -> None:
            raise BrokenPipeError

    if not console.is_terminal:
        console = Piped(width=width, soft_wrap=False)
    if lines:   # one print of the joined lines: the same output as a print per line, in half the time
        console.print(Text("\n").join(Text(line, style=style) for line, style in lines), no_wrap=False,
                      overflow="fold", crop=False, width=width)


def emit_answer(answer: str | list, console: Console, width: int) -> None:
    """A command's answer on stdout (a JSON text, or :func:`print_lines`); a reader that leaves (``| head``) ends it
    quietly, exit 0 (the buffered rest goes to ``/dev/null``)."""
    try:
        if isinstance(answer, str):
            print(answer)
        else:
            print_lines(answer, console, width)
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def with_stderr(judge: Callable, *args):
    """``judge(*args)`` and the text it wrote on stderr (which still goes there as it comes)."""
    real = sys.stderr

    class Tee(io.StringIO):
        def write(self, text: str) -> int:
            super().write(text)
            return real.write(text)

        def flush(self) -> None:
            real.flush()

    with contextlib.redirect_stderr(Tee()) as kept:
        answer = judge(*args)
    return answer, kept.getvalue()
