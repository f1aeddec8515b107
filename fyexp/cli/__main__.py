"""``python -m fyexp.cli ARGS``: the ``fyexp`` script."""

from fyexp.cli.app import main

main()
