"""The ``fyexp`` command line and what its commands do below it.

- :mod:`fyexp.cli.app`: the Typer app; parses the options into one
  :class:`~fyexp.cli.commands.options.Options`, hands it to a command, prints; every error one line and an exit
  status;
- :mod:`fyexp.cli.reproduce`: a paper's experiments, each run through :mod:`fyexp.cli.commands`, then the report;
- :mod:`fyexp.cli.commands`: what ``run``, ``tune``, ``report`` and ``claims`` do below the CLI.

``fyexp = "fyexp.cli:main"`` (the installed script) names :func:`main` here, which imports the app only when called,
so that importing a command module does not build the app.
"""

from __future__ import annotations


def main(argv: list[str] | None = None) -> None:
    """The installed ``fyexp`` script: :func:`fyexp.cli.app.main`."""
    from fyexp.cli.app import main as run

    run(argv)
