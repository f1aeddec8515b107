"""The project's papers (``papers:`` of ``paper_meta.yaml``) and that file as read, with nothing heavier than YAML
to import (the claims' rendering reads the paper ids; :mod:`fyexp.reference.rows` the tables' entries)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources

from fyexp.store.plain import safe_yaml


@functools.lru_cache(maxsize=1)
def _meta() -> dict:
    return safe_yaml(resources.files("fyexp.reference").joinpath("paper_meta.yaml").read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Paper:
    """One paper of the project (``papers:`` of ``paper_meta.yaml``): its id, printed title, and how specs cite it."""

    id: str
    title: str
    cited_as: str


def papers() -> dict[str, Paper]:
    """The five papers, by id, in the order of ``paper_meta.yaml`` (the project's one list of them)."""
    return {key: Paper(key, entry["title"], entry["cited_as"]) for key, entry in _meta()["papers"].items()}
