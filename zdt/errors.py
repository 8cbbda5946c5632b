"""Exceptions. The codecs' errors are ValueError subclasses (callers that catch ValueError keep
working); the job's errors (JobError and below) carry the exit status of the command."""

from __future__ import annotations

import re


class ZdtError(ValueError):
    """Base class of zdt's errors."""


class ConfigError(ZdtError):
    """A codec configuration that the spec (or zdt) does not accept.

    ``config_key`` names the offending key (``"rounding"``, ``"scalar_map"``, ...).
    """

    def __init__(self, message: str, *, config_key: str | None = None) -> None:
        super().__init__(message)
        self.config_key = config_key


class CastError(ZdtError):
    """An element that the configured cast cannot convert.

    Attributes name everything a user needs to find and fix it: the element's n-d ``index``, its
    exact ``value`` in the ``source`` data type, the ``target`` data type, the ``reason`` and
    the ``config_key`` whose change would alter the outcome. ``detail`` is the message without
    the leading element description.
    """

    def __init__(
        self,
        message: str,
        *,
        index: tuple[int, ...],
        value: object,
        source: str,
        target: str,
        reason: str,
        config_key: str,
        detail: str,
    ) -> None:
        super().__init__(message)
        self.detail = detail
        self.index = index
        self.value = value
        self.source = source
        self.target = target
        self.reason = reason
        self.config_key = config_key


class CorruptChunkError(ZdtError):
    """A chunk (or buffer) that does not follow its codec's format: decoding it stops here
    instead of reading past it or giving wrong data.

    ``codec`` names the codec and ``part`` the part of the chunk found wrong (``"header"``,
    ``"symbols"``, ``"raw values"``, ``"ANS stream"``, ``"ANS tables"``, ``"shape"``, ...).
    """

    def __init__(self, message: str, *, codec: str, part: str) -> None:
        super().__init__(message)
        self.codec = codec
        self.part = part


class FillValueError(ConfigError):
    """A fill value that does not survive the codec's encode-then-decode round trip."""


class ScaleOffsetError(ZdtError):
    """An element scale_offset cannot transform: its n-d ``index``, ``value``, the ``dtype``,
    the ``operation`` that failed and the ``config_key`` (offset or scale) involved. ``detail``
    is the message without the leading element description."""

    def __init__(self, message: str, *, index: tuple[int, ...], value: object, dtype: str,
                 operation: str, config_key: str, detail: str) -> None:
        super().__init__(message)
        self.detail = detail
        self.index = index
        self.value = value
        self.dtype = dtype
        self.operation = operation
        self.config_key = config_key


# --- the job: suggest, convert, encoding ---------------------------------------------------------
# Raised by zdt.suggest / zdt.convert / zdt.encoding and the `zdt` command. The message is one
# line that names what failed and where (the store, the array, the chunk key, the option); the
# command prints it as it is and exits with `exit_status` (docs/command.md, "Exit status").


# exit status of `zdt inspect --check` that found damaged chunks, and of `zdt convert
# --on-damaged-chunk fill` that filled some: the job is done, the data is not whole
DAMAGED = 4


class JobError(Exception):
    """Base class of the errors of a suggestion or a conversion; ``str(error)`` is one line.

    The message speaks the Python API's language (its parameters as ``abs_error=``); the
    command shows ``for_command(error)``: ``command`` when the command needs other words,
    else the message with each parameter spelled as the command's option."""

    exit_status = 1

    def __init__(self, *args: object, command: str | None = None) -> None:
        super().__init__(*args)
        self.command = command


class UsageError(JobError, ValueError):
    """The request itself is wrong: an option's value (a bound, a compressor, a plan file's
    contents), or options that contradict each other."""

    exit_status = 2


class InputError(JobError, ValueError):
    """What was asked cannot be done with this source or destination: no store there, an array
    a plan does not name, a destination that exists, a storage unit that breaks its bound."""

    exit_status = 1


class StorageError(JobError, OSError):
    """Reading or writing a store failed: a file system or object store error, a chunk that
    cannot be read or decoded. ``str(error)`` names the store, the key and the reason."""

    exit_status = 3


class KeptError(InputError):
    """An error after which what the conversion wrote is kept (a partial copy that does not
    match its source, a finished Icechunk copy whose branch could not be moved to it)."""


class MissingPackage(JobError, ImportError):
    """What was asked needs a package that is not installed; the message says what to install."""

    exit_status = 1


class Terminated(KeyboardInterrupt):
    """SIGTERM during a conversion: handled like Ctrl-C (the partial copy is kept for resume=True)."""


# the API's parameters and the command's options that give them
OPTIONS = {"abs_error": "--abs-error", "rel_error": "--rel-error", "bounds": "--bound",
           "include": "--include", "exclude": "--exclude", "readers": "--readers",
           "sample": "--sample", "compressor": "--compressor", "scheduler": "--scheduler",
           "storage_options": "--storage-options", "on_damaged_chunk": "--on-damaged-chunk",
           "codecs": "--codecs", "plan": "--plan", "branch": "--branch", "force": "--force",
           "resume": "--resume", "slices": "--slices", "report": "--report", "html": "--html"}
_PARAM = re.compile(r"(?<![\w./-])(" + "|".join(OPTIONS) + r")=(True\b)?(?=(.?))")


def for_command(exc: BaseException) -> str:
    """An error's message as the command shows it: ``abs_error=0.5`` -> ``--abs-error 0.5``,
    ``force=True`` -> ``--force``, ``bounds=`` -> ``--bound``."""
    given = getattr(exc, "command", None)
    if given:
        return given

    def flag(m: re.Match) -> str:
        option = OPTIONS[m.group(1)]
        if m.group(2) or not m.group(3) or m.group(3) in " ,;:)":
            return option
        return option + " "
    return _PARAM.sub(flag, str(exc))
