"""Helpers shared by zdt's zarr v3 codec classes."""

from __future__ import annotations

from typing import Any

from zdt.errors import ConfigError


def parse_codec_json(data: object, name: str, *, allowed: set[str],
                     require_configuration: bool) -> dict[str, Any]:
    """The configuration of codec metadata `{"name": name, "configuration": {...}}`, checked
    strictly: no other top-level keys, no unknown configuration keys ("Metadata with
    additional keys MUST be treated as invalid by readers")."""
    if not isinstance(data, dict):
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
    if not isinstance(config, dict):
        raise ConfigError(f"{name}: configuration must be an object, got {config!r}",
                          config_key="configuration")
    unknown = sorted(set(config) - allowed)
    if unknown:
        raise ConfigError(
            f"{name}: unknown configuration key(s) {', '.join(map(repr, unknown))}; "
            f"allowed: {', '.join(sorted(allowed))}",
            config_key=unknown[0],
        )
    nulls = sorted(k for k, v in config.items() if v is None)
    if nulls:
        raise ConfigError(f"{name}: configuration key {nulls[0]!r} is null; leave it out instead",
                          config_key=nulls[0])
    return dict(config)


class SyncCodec:
    """zarr's async codec entry points over the synchronous ``_encode_sync`` / ``_decode_sync``
    (the kernels release the GIL; zarr runs these in its thread pool)."""

    async def _encode_single(self, chunk: Any, chunk_spec: Any) -> Any:
        return self._encode_sync(chunk, chunk_spec)  # type: ignore[attr-defined]

    async def _decode_single(self, chunk: Any, chunk_spec: Any) -> Any:
        return self._decode_sync(chunk, chunk_spec)  # type: ignore[attr-defined]
