"""The ``fyexp`` command line: :mod:`fyexp.cli.app` (the Typer app), :mod:`fyexp.cli.reproduce` (a paper's
experiments, then the report), :mod:`fyexp.cli.commands` (what each command does below the CLI).  :func:`main` (the
console script) imports the app only when called: importing a command module does not build it."""


def main(argv: list[str] | None = None) -> None:
    from fyexp.cli.app import main as run

    run(argv)
