"""What zdt's zarr v3 codec classes share: zarr's async entry points over the synchronous
kernels, and the metadata form of a codec without configuration."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from zdt.codecs.config_json import check_keys, parse_envelope

if TYPE_CHECKING:
    from typing import Self

    from zarr.core.common import JSON


class SyncCodec:
    """zarr's async codec entry points over the synchronous ``_encode_sync`` /
    ``_decode_sync``. The kernels release the GIL, so a pipeline that runs codecs in threads
    (zarr 3.4's FusedCodecPipeline, zdt's own) runs them in parallel; zarr's default pipeline
    awaits them one after another on its event loop."""

    async def _encode_single(self, chunk: Any, chunk_spec: Any) -> Any:
        return self._encode_sync(chunk, chunk_spec)  # type: ignore[attr-defined]

    async def _decode_single(self, chunk: Any, chunk_spec: Any) -> Any:
        return self._decode_sync(chunk, chunk_spec)  # type: ignore[attr-defined]


class NoConfiguration:
    """from_dict / to_dict of a codec without configuration, written as zarr-python writes it."""

    _name: str

    @classmethod
    def from_dict(cls, data: dict[str, JSON]) -> Self:
        check_keys(parse_envelope(data, cls._name, require_configuration=False), (), cls._name)
        return cls()

    def to_dict(self) -> dict[str, JSON]:
        return {"name": self._name, "configuration": {}}
