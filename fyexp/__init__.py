"""fyexp: an experiment runner that reproduces five papers on generalized variational inference; start at
:mod:`fyexp.cli` (``fyexp run NAME``): spec (:mod:`fyexp.spec.specs`), run (:mod:`fyexp.run.runner`), rows
(:mod:`fyexp.store.results`)."""

__version__ = "0.1.0"
