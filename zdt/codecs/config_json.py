"""Reading codec configurations strictly: the rules both codec faces (zarr v3 codecs in
zdt.codecs.zarr, numcodecs codecs in zdt.codecs.numcodecs) share.

"Metadata with additional keys MUST be treated as invalid by readers": an unknown key is an
error, and so is a null (an optional key is left out, never null). From Python, ``None`` for an
optional argument means "absent"; only JSON configurations are read through here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from zdt.errors import ConfigError


def check_keys(config: Mapping[str, Any], allowed: Iterable[str], codec: str, *,
               required: Iterable[str] = ()) -> dict[str, Any]:
    """A configuration's keys: none unknown, none null, every required one present."""
    if not isinstance(config, Mapping):
        raise ConfigError(f"{codec}: configuration must be an object, got {config!r}",
                          config_key="configuration")
    allowed = list(allowed)
    unknown = sorted(map(str, set(config) - set(allowed)))
    if unknown:
        raise ConfigError(
            f"{codec}: unknown configuration key(s) {', '.join(map(repr, unknown))}; "
            f"allowed: {', '.join(allowed)}",
            config_key=unknown[0],
        )
    nulls = sorted(k for k, v in config.items() if v is None)
    if nulls:
        raise ConfigError(f"{codec}: configuration key {nulls[0]!r} is null; leave it out instead",
                          config_key=nulls[0])
    for key in required:
        if key not in config:
            raise ConfigError(f"{codec}: configuration needs {key!r}", config_key=key)
    return dict(config)


def parse_envelope(data: object, name: str, *, require_configuration: bool) -> dict[str, Any]:
    """The configuration inside zarr v3 codec metadata ``{"name": name, "configuration":
    {...}}`` (no other top-level keys); {} when it has none and none is required."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{name}: codec metadata must be an object, got {data!r}", config_key="name")
    if data.get("name") != name:
        raise ConfigError(f"{name}: codec name must be {name!r}, got {data.get('name')!r}",
                          config_key="name")
    extra = sorted(set(data) - {"name", "configuration"})
    if extra:
        raise ConfigError(f"{name}: unknown codec metadata key(s) {', '.join(map(repr, extra))}",
                          config_key=extra[0])
    if "configuration" not in data:
        if require_configuration:
            raise ConfigError(f"{name}: codec metadata needs a 'configuration'",
                              config_key="configuration")
        return {}
    config = data["configuration"]
    if not isinstance(config, Mapping):
        raise ConfigError(f"{name}: configuration must be an object, got {config!r}",
                          config_key="configuration")
    return dict(config)
