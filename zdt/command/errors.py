"""The one exception a subcommand raises for bad input.

A subcommand raises CommandError for anything wrong with what the user gave it (a path, an
array name, a bound, an existing destination); zdt.command prints its message as one line and
exits with status 1.
"""

from __future__ import annotations


class CommandError(Exception):
    """Bad input to a subcommand: the message is the one line the user sees."""


class Kept(CommandError):
    """An error after which what the conversion wrote is kept (a partial copy that does not
    match its source, a finished Icechunk copy whose branch could not be moved to it)."""
