"""The provenance of results: the run record of each cell and whether its rows are still current.

- :mod:`fyexp.store.provenance.record`: the run record (settings, executed code, environment, commit, fingerprint)
  beside each cell file, one file ``<cell>.record.json``: written once per run of the cell
  (:func:`~fyexp.store.provenance.record.write_record`), read by one validated loader
  (:func:`~fyexp.store.provenance.record.load_record`);
- :mod:`fyexp.store.provenance.freshness`: the one rule (:func:`~fyexp.store.provenance.freshness.judge`) that says
  whether a cell's rows are current, stale by code, behaviour unchanged, at old settings or of unknown provenance, used
  by ``run`` (:meth:`fyexp.store.results.ResultStore.is_finished`), ``report`` and ``claims``
  (:mod:`fyexp.run.spec_freshness`);
- :mod:`fyexp.store.provenance.executed`: the recorder of the fyexp functions a cell executes, and their normalised
  hashes;
- :mod:`fyexp.store.provenance.source`: the source tree's facts: its commit, the files an experiment imports, the
  fingerprint committed at a commit.

Nothing here imports a spec, a runner, torch or pandas at import time (pandas is imported where a frame is made), so
the results store below everything may ask it.
"""
