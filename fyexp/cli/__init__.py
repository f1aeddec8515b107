"""The ``fyexp`` command line (:mod:`fyexp.cli.app`); :func:`main`, the console script, imports the app when called."""


def main(argv: list[str] | None = None) -> None:
    from fyexp.cli.app import main as run

    run(argv)
