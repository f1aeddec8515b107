"""Tables of text that the code itself states: VR Table 4, the VAE architectures, rendered from the models the
runner builds and compared string for string with the paper's cells.

A built :class:`fyexp.models.VAE` reads, in the paper's notation (VR App. D: "d500-s200 stands for a neural network
with one deterministic layer of 500 units followed by a stochastic layer of 200 units"), as the encoder path from the
data up: each encoder's hidden ``Linear`` layers as ``d<units>``, then its stochastic layer as ``s<units>`` (the
width of its mean head: half of a joint mean-and-scale head); the activation is the hidden layers' module
(``Softplus`` printed ``log(1 + exp(x))``); the probability type is ``<p(x | h)>/<q(h | x)>``.  A cell agrees when
the strings are equal (``exact``), else it is ``outside``: there is no tolerance on text.

This module builds the models (torch), so the report loads it only for a table it renders.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from fyexp.report.tolerance import EXACT, NOT_RUN, OUTSIDE

ACTIVATION_TEXT = {"Softplus": "log(1 + exp(x))", "Tanh": "tanh", "ReLU": "relu", "LeakyReLU": "leaky relu"}
FAMILY_TEXT = {"Bernoulli": "Bernoulli", "Gaussian": "Gaussian", "GaussianPosterior": "Gaussian",
               "BetaGaussianPosterior": "beta-Gaussian"}


def describe_vae(model) -> dict[str, str]:
    """``architecture``, ``activation`` and ``probability_type`` of a built VAE, in the paper's notation."""
    from torch import nn

    parts, activations = [], set()
    for encoder in model._encoders():
        for layer in encoder.body:
            if isinstance(layer, nn.Linear):
                parts.append(f"d{layer.out_features}")
            else:
                activations.add(type(layer).__name__)
        latent = encoder.out.out_features // 2 if hasattr(encoder, "out") else encoder.mean.out_features
        parts.append(f"s{latent}")
    activation = ", ".join(ACTIVATION_TEXT.get(a, a) for a in sorted(activations))
    p = FAMILY_TEXT.get(type(model.observation).__name__, type(model.observation).__name__)
    q = FAMILY_TEXT.get(type(model.family).__name__, type(model.family).__name__)
    return {"architecture": "-".join(parts), "activation": activation, "probability_type": f"{p}/{q}"}


def _vr_table4() -> dict[tuple[str, str, str], str]:
    """VR Table 4 from :func:`fyexp.models.vr_architectures.model_config` and :func:`fyexp.models.build_vae`."""
    from fyexp.data.freyface import HEIGHT, WIDTH
    from fyexp.models import build_vae
    from fyexp.models.vr_architectures import model_config

    out = {}
    rows = (("Frey Face", "freyface", HEIGHT * WIDTH, 1), ("Caltech 101", "caltech", 784, 1),
            ("MNIST", "mnist", 784, 1), ("MNIST", "mnist", 784, 2))
    for setting, dataset, n_in, layers in rows:
        for column, text in describe_vae(build_vae(model_config(dataset, layers), n_in)).items():
            out[(setting, f"L={layers}", column)] = text
    return out


@dataclass(frozen=True)
class TextTable:
    experiment: str  # the experiment whose code states the table
    render: Callable[[], dict[tuple[str, str, str], str]]  # (setting, row, column) -> our text


TEXT_TABLES: dict[tuple[str, str], TextTable] = {("vr", "4"): TextTable("vr-vae", _vr_table4)}


def rendered(paper: str, table: str, manifest=None) -> dict[tuple[str, str, str], str]:
    """``TEXT_TABLES[(paper, table)].render()``; with a :class:`fyexp.report.cache.Manifest`, kept there under the
    version of the code that renders it (:func:`fyexp.report.cache.code_version`: this module and the model builders
    it imports), so that a report whose code did not change builds no model (and imports no torch)."""
    text = TEXT_TABLES[(paper, table)]
    if manifest is None:
        return text.render()
    from fyexp.report.cache import cached, code_version

    def draw() -> tuple[list, dict]:
        return [], {"cells": [[*key, value] for key, value in sorted(text.render().items())]}

    entry = cached(manifest, f"text:{paper}/{table}", code_version(text.render.__module__), draw)[1]
    return {(setting, row, column): value for setting, row, column, value in entry["cells"]}


def score_text(published, ours: dict[tuple[str, str, str], str]) -> list[str]:
    """Per published cell (rows with ``setting``, ``row``, ``column``, ``value``): exact when our text is the
    paper's, character for character; outside when it differs; not run when the code states no such cell."""
    out = []
    for cell in published.itertuples(index=False):
        text = ours.get((cell.setting, cell.row, cell.column))
        out.append(NOT_RUN if text is None else EXACT if text == cell.value else OUTSIDE)
    return out


TEXT_STATUS = "architectures read from the code, not run"  # the status of a text table: never "reproduced"


def text_status(statuses: list[str]) -> str:
    """The status of a text table (:func:`score_text`'s ``statuses``): what it is, strings the code states and no
    run produced, with how many of its cells read as printed: ``architectures read from the code, not run (12 of 12
    cells as printed)``. It is never ``reproduced``: no run stands behind it, so no total counts it as one."""
    return f"{TEXT_STATUS} ({statuses.count(EXACT)} of {len(statuses)} cells as printed)"


def text_table_markdown(title: str, published, ours: dict[tuple[str, str, str], str], statuses: list[str],
                        status: str) -> str:
    """The Markdown of a text table: ours beside the paper's, with each cell's mark and the table's status."""
    marks = {EXACT: "✓ exact", OUTSIDE: "✗", NOT_RUN: "— not in the code"}
    lines = [f"### {title}", "", f"status: **{status}** · ✓ exact {statuses.count(EXACT)} of {len(statuses)}", "",
             "| Setting | Row | column | ours (from the model builders) | paper | |", "|---|---|---|---|---|---|"]
    for cell, mark in zip(published.itertuples(index=False), statuses):
        lines.append(f"| {cell.setting} | {cell.row} | {cell.column} | "
                     f"{ours.get((cell.setting, cell.row, cell.column), '')} | {cell.value} | {marks[mark]} |")
    lines += ["", "ours = the models the runner builds (`model_config` + `build_vae`), read back from their modules "
              "and compared with the paper's text character for character.", ""]
    return "\n".join(lines)
