"""Running a grid: the plan and its estimates (:mod:`.plan`, :mod:`.estimate`, :mod:`.speed`,
:mod:`.overview`, :mod:`.kept_summaries`), the cell loop (:mod:`.runner`, :mod:`.cell_filter`,
:mod:`.cell_claims`, :mod:`.progress`), the executors (:mod:`.executors`, :mod:`.slurm_watcher`), and what the run
is judged by (:mod:`.fingerprints`, :mod:`.derivation`)."""
