"""A kit that turns a short GPU allocation into finished cells (``scripts/gpu_lease.py``, ``docs/contributing/gpu-lease.md``).

An allocation is a few jobs of at most 10 minutes on a bare machine that receives the working tree (at most
64 MiB with what is carried beside it) and returns a few files.  The kit's pieces, one job each:

- :mod:`gpu_kit.queue`: the missing ``paper`` cells of the queue, in priority order, as *units* (an ensemble
  of a cell's seeds where the experiment trains seeds together, else one cell);
- :mod:`gpu_kit.data`: the data files those units read, packed byte for byte into ``.tar.xz`` files (LZMA)
  and unpacked into a data root on the device;
- :mod:`gpu_kit.device`: the job on the device (environment check, units run through the runner's own
  functions, a wall-clock budget that stops between epochs);
- :mod:`gpu_kit.bundle`: the finished cells and unfinished checkpoints packed to come back, and their merge
  into ``results/``;
- :mod:`gpu_kit.estimate`: what one allocation would finish, from recorded times and stated assumptions.
"""
