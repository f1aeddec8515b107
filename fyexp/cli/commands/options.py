"""The options ``fyexp run``, ``tune`` and ``reproduce`` share, as one object, and the folders they name.

A folder option falls back on its environment variable; set but empty is an error, not the current folder.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from fyexp.core.errors import EnvironmentFailure, FyexpError

if TYPE_CHECKING:  # `list` and `show` read the folders here and import no more
    from fyexp.run.executors import ExecutorOptions


@dataclass(frozen=True)
class Options:
    """Every option of ``run`` (``tune`` and ``reproduce`` take a part of them; the rest keep their defaults)."""

    profile: str = "paper"
    sets: tuple[str, ...] = ()          # --set KEY=VALUE
    seeds: str | None = None
    only: tuple[str, ...] = ()          # --only KEY=PATTERN
    device: str = "auto"
    data_dir: Path | None = None
    results_dir: Path | None = None
    experiments_dir: Path | None = None
    executor: ExecutorOptions | None = None
    force: bool = False
    allow_dirty: bool = False
    best: bool = False
    progress: bool = True
    dry_run: bool = False
    strict: bool = False
    yes: bool = False

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> "Options":
        """The options among a command's parsed ``params`` (``typer.Context.params``; lists become tuples, folders
        paths, None a default), the executor options one :class:`~fyexp.run.executors.ExecutorOptions`."""
        from fyexp.run.executors import executor_options

        names = {f.name for f in dataclasses.fields(cls)} - {"executor"}
        values = {k: tuple(v) if isinstance(v, list) else Path(v) if k.endswith("_dir") else v
                  for k, v in params.items() if k in names and v is not None}
        given = {"--" + k.replace("_", "-"): v for k, v in params.items()}
        return cls(**values, executor=executor_options(params.get("executor"), given))


def env_setting(name: str) -> str | None:
    """An environment setting, or None when unset; set but empty (or blank) is an error, not the current folder."""
    value = os.environ.get(name)
    if value is not None and not value.strip():
        raise FyexpError(f"{name}: expected a folder, got an empty value (unset it to use the default)")
    return value


def results_folder(option: Path | None, writable: bool = False) -> Path:
    """The results folder; with ``writable`` it must be (or become) a folder where this process can write a file
    (else one line: exit 2 for a file in its place, 1 for a folder it cannot write to)."""
    import tempfile

    path, what = option or Path(env_setting("FYEXP_RESULTS_DIR") or "results"), "--results-dir / FYEXP_RESULTS_DIR"
    if path.exists() and not path.is_dir():
        raise FyexpError(f"{what}: '{path}' is a file; expected a folder")
    try:
        if writable:
            path.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=path, prefix=".fyexp-write-check."):
                pass
    except (FileExistsError, NotADirectoryError):
        raise FyexpError(f"{what}: '{path}' (or a parent of it) is a file; expected a folder") from None
    except OSError as exc:
        raise EnvironmentFailure(f"{what}: cannot write to '{path}' ({exc.strerror})") from None
    return path


def data_folder(option: Path | None) -> Path | None:
    """The data root: ``--data-dir``, else ``$FYEXP_DATA_DIR``, else None (loaders download where they can)."""
    path = option or (Path(env) if (env := env_setting("FYEXP_DATA_DIR")) else None)
    if path is not None and not path.is_dir():
        raise FyexpError(f"--data-dir / FYEXP_DATA_DIR: '{path}' is not a folder")
    return path


def resolve_experiment(name: str, options: Options):
    """The experiment ``name`` (its runner imported) and its spec resolved at ``options``' profile, ``--seeds``
    and ``--set`` overrides: seeds other than the profile's make a *variant* (``paper+seeds=0-9``), whose rows and
    verdicts never mix with the profile's; the profile's own seeds (in any order) are the profile itself."""
    from fyexp.experiments import get_experiment
    from fyexp.spec.specs import load_spec, parse_seeds, parse_sets, resolve_variant

    overrides, spec = parse_sets(options.sets), load_spec(name, options.experiments_dir)
    if (seeds := parse_seeds(options.seeds)) is not None and any(o.key == "seeds" for o in overrides):
        raise FyexpError("--seeds: give the seeds once, either --seeds or --set seeds=..., not both")
    experiment = get_experiment(spec.runner)
    return experiment, resolve_variant(spec, options.profile, experiment.Config, seeds, overrides)
