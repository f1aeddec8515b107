"""Plain data, the one conversion of the project: dataclasses become mappings, tuples lists, paths and mapping keys
strings.  A cell's settings hash reads the result (:mod:`fyexp.spec.settings`: changing it changes every hash); so do
``fyexp show``'s YAML and :func:`fyexp.spec.tuning.config_with`.  And the one YAML reader."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any


def jsonable_fields(obj: Any, without: tuple[str, ...] = ()) -> dict:
    """``jsonable(obj)`` of the dataclass ``obj`` less its fields ``without`` (never converted: a spec's grid)."""
    return {f.name: jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj) if f.name not in without}


def jsonable(obj: Any) -> Any:
    """Dataclasses, tuples and paths as plain JSON values: what ``jsonable(dataclasses.asdict(obj))`` gives, without
    ``asdict``'s deep copy of every value first (``fyexp list`` converts a 100-odd-value config per paper cell)."""
    if isinstance(obj, (str, int, float, bool, type(None))):
        return obj
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return jsonable_fields(obj)
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, Path):
        return str(obj)
    return obj


def safe_yaml(text: str) -> Any:
    """``yaml.safe_load(text)``, by libyaml's ``CSafeLoader`` where PyYAML has it (25 times faster on claims.yaml)."""
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def read_yaml_file(path: Path, what: str) -> Any:
    """The plain data of the YAML file ``path`` (:func:`safe_yaml`; an empty file is ``{}``), or one-line
    :class:`fyexp.core.errors.FyexpError` naming it: ``<path>: no such <what>`` or ``<path>: not valid YAML (...)``."""
    import yaml

    from fyexp.core.errors import FyexpError

    try:
        return safe_yaml(Path(path).read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise FyexpError(f"{path}: no such {what}") from None
    except yaml.YAMLError as exc:
        raise FyexpError(f"{path}: not valid YAML ({' '.join(str(exc).split())})") from None
