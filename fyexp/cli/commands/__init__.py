"""What ``fyexp run``, ``tune``, ``report`` and ``reproduce`` do, below the command line.

The CLI (:mod:`fyexp.cli`) parses the options into one :class:`~fyexp.cli.commands.options.Options` and hands it, with
the consoles to print to, to one function per command: :func:`fyexp.cli.commands.run.run_command`,
:func:`fyexp.cli.commands.tune.tune_command`, :func:`fyexp.cli.commands.report.report_command`;
:func:`fyexp.cli.reproduce.reproduce_papers` runs the first and the third for every experiment of a paper with the
same object.  Planning and its checks are :mod:`fyexp.run.plan`'s, jobs :mod:`fyexp.run.executors`'.
"""
