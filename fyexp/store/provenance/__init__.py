"""The provenance of results: each cell's run record (:mod:`~fyexp.store.provenance.record`), the one rule that
says whether its rows are current (:mod:`~fyexp.store.provenance.freshness`), the recorder and hashes of the fyexp
functions a cell executes (:mod:`~fyexp.store.provenance.executed`) and the source tree's facts
(:mod:`~fyexp.store.provenance.source`).  Nothing here imports a spec, a runner, torch or pandas at import time, so
the results store below everything may ask it.
"""
