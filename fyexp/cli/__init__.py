"""The ``fyexp`` command line: :mod:`fyexp.cli.app` (the Typer app: options into one
:class:`~fyexp.cli.commands.options.Options`, every error one line and an exit status), :mod:`fyexp.cli.reproduce`
(a paper's experiments, then the report) and :mod:`fyexp.cli.commands` (what each command does below the CLI).

:func:`main` (``fyexp = "fyexp.cli:main"``) imports the app only when called: importing a command module does not
build it."""


def main(argv: list[str] | None = None) -> None:
    from fyexp.cli.app import main as run

    run(argv)
