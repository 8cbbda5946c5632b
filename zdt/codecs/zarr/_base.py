"""What zdt's zarr v3 codec classes share: zarr's async entry points over the synchronous
methods, element-wise codecs as stages, and the metadata form of a codec without
configuration."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from zdt.codecs import steps
from zdt.codecs.config_json import check_keys, parse_envelope

if TYPE_CHECKING:
    from typing import Self

    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import NDBuffer
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


class ElementwiseCodec(SyncCodec):
    """An array -> array codec that transforms each element on its own. It says what it does to
    a chunk of a given spec as two stages (`stages`, zdt.codecs.steps); its own encode and
    decode run them, and zdt's pipeline fuses a chain of such codecs into one pass. A new
    element-wise codec is a kernel step, a class like this and a registration: nothing in the
    pipeline names it."""

    def stages(self, chunk_spec: ArraySpec) -> steps.Stages:
        """The encode and decode stages for chunks of `chunk_spec` (as this codec receives
        them when encoding)."""
        raise NotImplementedError

    def _encode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer | None:
        return self._run(self.stages(chunk_spec).encode, chunk_array, chunk_spec)

    def _decode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer:
        return self._run(self.stages(chunk_spec).decode, chunk_array, chunk_spec)

    def _run(self, stage: steps.Stage | None, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer:
        arr = np.asarray(chunk_array.as_ndarray_like())
        # always into a new array: the input may be held by the caller (a MemoryStore hands
        # out the stored buffer itself)
        out = arr.copy() if stage is None else steps.apply(stage, arr, where="chunk element")
        return chunk_spec.prototype.nd_buffer.from_ndarray_like(out)


class NoConfiguration:
    """from_dict / to_dict of a codec without configuration, written as zarr-python writes it."""

    _name: str

    @classmethod
    def from_dict(cls, data: dict[str, JSON]) -> Self:
        check_keys(parse_envelope(data, cls._name, require_configuration=False), (), cls._name)
        return cls()

    def to_dict(self) -> dict[str, JSON]:
        return {"name": self._name, "configuration": {}}
