"""Errors a person at the table can act on; the CLI prints them as one line."""


class CompanionError(Exception):
    """Bad input or a state the user must fix; the message says what and where."""


class ConfigError(CompanionError):
    """The configuration file or a command-line setting is wrong."""
