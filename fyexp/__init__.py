"""fyexp: an experiment runner that reproduces five papers on generalized variational inference.

Start at :mod:`fyexp.cli` (``fyexp run NAME``), which resolves ``experiments/NAME.yaml`` with
:mod:`fyexp.spec.specs`, runs the experiment registered in :mod:`fyexp.experiments` through
:mod:`fyexp.run.runner`, and stores tidy rows with :mod:`fyexp.store.results`.
"""

__version__ = "0.1.0"
