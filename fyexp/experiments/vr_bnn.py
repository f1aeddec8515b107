r"""Bayesian neural networks on UCI regression with the VR bound: Li & Turner Tables 2 and 3 (§5.2).

One cell = one data set (the grid's ``dataset`` axis): every split × every method (VI = α 1, VR-0.5, VR-0.0,
VR-max = α −∞) trains as **one** batched computation (:func:`fyexp.train.batched_bnn.fit_group`: a
:class:`~fyexp.models.bnn.BatchedBNN` with weights of shape (methods · splits, K, P)) through the shared
:class:`~fyexp.train.Trainer`, on the minibatch VR bound (eq. 23)

    L̃_α(q; S) = 1/(1−α) log (1/K) Σ_k [p₀(θ_k) f̄_S(θ_k)^N / q(θ_k)]^{1−α},

one α per model (:class:`~fyexp.objectives.per_column.PerColumnVR`; VI with the closed-form KL as the authors'
code).  Each split has its own shuffling generator and each model its own noise generator, so a split's numbers
are those of training it alone (``tests/experiments/test_vr_bnn.py``).  The loss of a step is Σ_m −L̃_m / N_m, so Adam
sees each model's own gradient.

Metrics per (method, split), in original units (docs/protocols.md, VR BNNs): ``test_loglik`` = mean_n log-mean-exp_k
N(y_n; F_k(x_n) s_y + μ_y, σ² s_y²) and ``test_rmse`` of the predictive mean; the report averages them over the
splits (mean ± standard error, the paper's convention).  ``n_splits`` takes a data set's first splits, all of them
where it has fewer (a profile's 5 splits are Year's one).  A data set missing from the data root (Year here) is a
skipped cell (:class:`~fyexp.core.errors.CellSkipped`, "data missing (... where to get it)"): no file, no failure.
"""

from __future__ import annotations

import dataclasses
import math
import time

from fyexp.data.uci import PAPER_NAMES, load_split, load_uci
from fyexp.core.errors import CellFailed, CellSkipped, DataMissing
from fyexp.experiments import register
from fyexp.experiments.grid import GridExperiment, PaperKeys, metric
from fyexp.experiments.base import CellWork
from fyexp.experiments.vr_bnn_config import METHOD_CODES, METHODS, WORK_ACROSS_DATASETS, Config, cell_config, \
    cell_work
from fyexp.store.results import Cell
from fyexp.train.batched_bnn import BNNOptions, fit_group, group_by_size, threads


@register
class VRBNN(GridExperiment):
    name = "vr_bnn"
    Config = Config
    # A cell trains all four methods: each metric carries its method's row (``paper_row``, a column of the metric,
    # which takes precedence over the declaration's per-cell ``row``).
    paper_keys = (PaperKeys(tables=(("vr", "2"),), metrics=("test_loglik",), row=lambda cell: ""),
                  PaperKeys(tables=(("vr", "3"),), metrics=("test_rmse",), row=lambda cell: ""))

    def method(self, config: Config, params: dict) -> str:
        return "bnn"

    cell_config = staticmethod(cell_config)   # the settings scope, in the light config module
    work_across_datasets = WORK_ACROSS_DATASETS

    def work(self, stated: dict, params: dict) -> CellWork | None:
        """Training and evaluation work, counted from the data set's shape (:func:`cell_work`)."""
        return CellWork.of(cell_work(stated, params))

    def measure(self, config: Config, cell: Cell, ctx):
        name = cell.params["dataset"]
        try:
            data = load_uci(None if ctx.data_dir is None else str(ctx.data_dir), name)
        except DataMissing as exc:  # absent: the cell skips; a damaged file stays an error (exit 2)
            raise CellSkipped(f"data missing ({exc})") from None
        n_splits = data.n_splits if config.n_splits is None else min(config.n_splits, data.n_splits)
        splits = [(s, load_split(data, s)) for s in range(n_splits)]
        hidden, n_samples, epochs = config.for_dataset(name)
        train = dataclasses.replace(config.train, epochs=epochs)
        options = BNNOptions(config.prior_var, config.init_std, config.init_log_var, config.analytic_kl,
                             config.model_chunk)
        setting, out, tic = PAPER_NAMES.get(name, name), [], time.perf_counter()
        for i, group in enumerate(group_by_size(splits)):
            with threads(config.num_threads):
                result = fit_group(group, [(METHOD_CODES[m], METHODS[m]) for m in config.methods], hidden=hidden,
                                   n_samples=n_samples, train=train, seed=cell.seed, options=options,
                                   device=ctx.device, work_dir=ctx.work_dir / f"group{i}", subtask=ctx.subtask,
                                   label=f"{ctx.experiment}/{cell.key}", test_samples=config.test_samples)
            for a, method in enumerate(config.methods):
                for g, split in enumerate(result.splits):
                    for name_, values in (("test_loglik", result.test_loglik), ("test_rmse", result.test_rmse)):
                        value = float(values[a, g])
                        if not math.isfinite(value):
                            raise CellFailed(f"{cell.key}: non-finite {name_} for {method}, split {split}")
                        out.append(metric(name_, value, setting=setting, paper_row=method, method=method,
                                          split=split, hidden=hidden, n_samples=n_samples, epochs=epochs))
        return out + [metric("train_time_s", time.perf_counter() - tic, method="bnn", setting=setting,
                             label=f"{len(splits)} splits x {len(config.methods)} methods, batched")]
