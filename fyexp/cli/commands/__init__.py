"""What ``fyexp run``, ``tune``, ``report`` and ``claims`` do below the command line (:mod:`fyexp.cli.app`), each
given one :class:`~fyexp.cli.commands.options.Options` and the consoles to print to."""
