"""Domain errors. Each says what was wrong in words a clerk can act on."""


class AbateError(Exception):
    """Base of every error Abate raises on purpose."""


class RuleCatalogError(AbateError):
    """A rules file is malformed (names file, rule and field)."""


class UnknownRuleError(AbateError):
    """A rule or municipality that the catalog does not have."""


class CommandRejectedError(AbateError):
    """A command the domain refuses (base of the specific refusals below)."""


class CaseClosedError(CommandRejectedError):
    pass


class CaseNotFoundError(CommandRejectedError):
    pass


class CaseAlreadyExistsError(CommandRejectedError):
    pass


class NoticeRequiredError(CommandRejectedError):
    pass


class CureDeadlineNotPassedError(CommandRejectedError):
    pass


class NotAllowedByRuleError(CommandRejectedError):
    pass


class ServiceAttemptRequiredError(NotAllowedByRuleError):
    """A fallback service method (posting, abode) without a recorded failed attempt."""


class OffenseDateError(CommandRejectedError):
    """An offense date outside the violation (before it began or after it ended)."""


class NoAbatementToBillError(CommandRejectedError):
    pass


class AppealWindowClosedError(CommandRejectedError):
    pass


class InvalidAmountError(CommandRejectedError):
    pass


class InvalidParcelError(CommandRejectedError):
    pass


class NothingToCorrectError(CommandRejectedError):
    pass


class BusinessTimeOrderError(CommandRejectedError):
    """Two business times in the wrong order (a fact before the one it depends on, a
    delivery before the service); the message names both."""


class InvalidCommandError(AbateError):
    """A command that is malformed (unknown name, missing field, wrong type)."""


class JournalError(AbateError):
    """A journal line was refused; nothing from the journal was recorded."""

    def __init__(self, line: int, reason: str):
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


class ConcurrentChangeError(AbateError):
    """Another writer recorded on the same case first; reload and retry."""


class StaleVersionError(AbateError):
    """A command meant for the case at one version (HTTP ``If-Match``) while the case is at
    another; nothing was recorded. ``current`` is the case's version (0: no such case)."""

    def __init__(self, message: str, current: int):
        super().__init__(message)
        self.current = current


class InputError(AbateError):
    """Input that cannot be read at all (not UTF-8, not a file, a line too long): the
    command line exits with status 2, like a usage error."""


class UnreadableLineError(JournalError, InputError):
    """A journal line that cannot be read as a JSON object at all (not UTF-8, too long,
    nested too deeply, not JSON): exit status 2, like a file that cannot be read. A line
    that is read but refused as a command stays a plain ``JournalError`` (exit 1)."""


class ConfigurationError(AbateError):
    """A setting that cannot work (an unsupported database URL, a database that does not
    exist, an output folder that is missing): exit status 2; nothing was recorded."""


class TamperedStoreError(AbateError):
    """Stored events or snapshots fail their integrity check; what is wrong is named.
    Nothing acts on such data (exit status 1)."""


class FutureTimeError(CommandRejectedError):
    """A business time, or a clock value, later than the real clock plus the tolerance."""


class UsageError(AbateError):
    """Options that do not go together, or a name the catalog does not know (exit status 2)."""
