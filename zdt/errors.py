"""Exceptions. All are ValueError subclasses so callers that catch ValueError keep working."""

from __future__ import annotations


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
