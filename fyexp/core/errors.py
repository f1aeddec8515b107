"""User-facing errors: the CLI prints their message and exits with status 2, without a traceback."""

from __future__ import annotations


class FyexpError(Exception):
    """An error caused by the user's input (a spec, an option, a missing file), not by a bug: exit status 2."""
    exit_code = 2


class EnvironmentFailure(FyexpError):
    """The machine, not the input, stops the run (an unwritable folder, a full disk): exit status 1."""
    exit_code = 1


class RunFailed(FyexpError):
    """Work ran but none of it succeeded (every trial of a tuning call failed): exit status 1, never 0."""
    exit_code = 1


class DataError(FyexpError):
    """A data file that is missing, damaged or not what a loader expects: names the path, what is wrong and how
    to get a good file (exit status 2).  Loaders raise it instead of the reader's own error (``tarfile.ReadError``,
    ``EOFError``, ``zlib.error`` ...), so a bad file is never taken for a bug or an interruption."""

    def __init__(self, path: object, problem: str, remedy: str):
        self.path, self.problem, self.remedy = str(path), problem, remedy
        super().__init__(f"{self.path}: {problem}; {remedy}")


class DataMissing(DataError):
    """A data file or folder that is absent (not damaged): an optional data set's cell may skip on it
    (:class:`CellSkipped`), while a damaged file is always an error."""


class SpecError(FyexpError):
    """A spec file that does not validate: names the file, the key and what was expected."""

    def __init__(self, file: str, key: str, expected: str, got: object = None):
        self.file, self.key, self.expected, self.got = str(file), key, expected, got
        super().__init__(f"{self.file}: key '{key}': expected {expected}{'' if got is None else f', got {got!r}'}")


class ConfigValueError(ValueError):
    """A ``Config.__post_init__``'s value out of range; the spec loader turns it into a :class:`SpecError`."""

    def __init__(self, key: str, expected: str, got: object = None):
        self.key, self.expected, self.got = key, expected, got
        super().__init__(f"key '{key}': expected {expected}, got {got!r}")


def require(condition: bool, key: str, expected: str, got: object = None) -> None:
    """Raise :class:`ConfigValueError` for ``key`` unless ``condition`` holds."""
    if not condition:
        raise ConfigValueError(key, expected, got)


class CellSkipped(Exception):
    """A cell whose data is absent (an optional data set not downloaded): reported once as skipped, no file is
    written (a later run with the data runs it), and it fails the run only under ``fyexp run --strict``."""


class CellFailed(Exception):
    """A cell that cannot produce a number (e.g. a NaN loss); it is recorded as failed, not as a value."""
