"""zarr v3 array -> bytes codecs for variable-length strings and bytes.

* ``VLenUTF8Codec`` (``vlen-utf8``) and ``VLenBytesCodec`` (``vlen-bytes``): byte-identical to
  numcodecs and zarr-python's own, decoding straight into StringDType.
* ``VLenArrowCodec`` (``zdt.vlen_arrow``, configuration ``{"offsets": "int32" | "int64"}``):
  the strings ZEP's offsets layout, for the ``string`` and ``bytes`` data types.

zarr's default config pins ``vlen-utf8`` / ``vlen-bytes`` to its own classes; see
`use_string_codecs` to make zarr use these.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from zarr.abc.codec import ArrayBytesCodec

from zdt import zarr_compat
from zdt.codecs import vlen
from zdt.codecs.config_json import check_keys, parse_envelope
from zdt.errors import ConfigError
from zdt.formats import data_type_name
from zdt.codecs.zarr._base import NoConfiguration, SyncCodec

if TYPE_CHECKING:
    from typing import Self

    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import Buffer, NDBuffer
    from zarr.core.common import JSON

STRING_TYPES = {"string"}
BYTES_TYPES = {"variable_length_bytes", "bytes"}


def _kind(dtype: Any, codec: str, allowed: set[str]) -> bool:
    """True for strings, False for bytes; ConfigError for a data type the codec cannot hold."""
    name = data_type_name(dtype, codec=codec)
    if name not in allowed:
        raise ConfigError(f"{codec}: cannot store data type {name!r} (it stores "
                          f"{' or '.join(sorted(allowed))})", config_key="data_type")
    return name in STRING_TYPES


class _VLenBase(SyncCodec, ArrayBytesCodec):
    is_fixed_size = False
    _name: str
    _allowed: set[str]
    _layout = vlen.VLEN
    _width = 4

    def validate(self, *, shape: tuple[int, ...], dtype: Any, chunk_grid: Any) -> None:
        _kind(dtype, self._name, self._allowed)

    def evolve_from_array_spec(self, array_spec: ArraySpec) -> Self:
        return self

    def _decode_sync(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> NDBuffer:
        utf8 = _kind(chunk_spec.dtype, self._name, self._allowed)
        native = chunk_spec.dtype.to_native_dtype()
        out = vlen.decode(chunk_bytes.as_array_like(), chunk_spec.shape, utf8=utf8,
                          layout=self._layout, width=self._width, codec=self._name, dtype=native)
        return chunk_spec.prototype.nd_buffer.from_numpy_array(out)

    def _encode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> Buffer | None:
        utf8 = _kind(chunk_spec.dtype, self._name, self._allowed)
        out = vlen.encode(chunk_array.as_numpy_array(), utf8=utf8, layout=self._layout,
                          width=self._width, codec=self._name)
        return chunk_spec.prototype.buffer.from_array_like(out)



    def compute_encoded_size(self, input_byte_length: int, chunk_spec: ArraySpec) -> int:
        raise NotImplementedError(f"{self._name}: encoded size depends on the strings")


@dataclass(frozen=True)
class VLenUTF8Codec(NoConfiguration, _VLenBase):
    """vlen-utf8: the ``string`` data type, decoded straight into StringDType."""

    _name = "vlen-utf8"
    _allowed = STRING_TYPES


@dataclass(frozen=True)
class VLenBytesCodec(NoConfiguration, _VLenBase):
    """vlen-bytes: the ``bytes`` (variable_length_bytes) data type, as object arrays of bytes."""

    _name = "vlen-bytes"
    _allowed = BYTES_TYPES


@zarr_compat.passes_string_codec_check
@dataclass(frozen=True)
class VLenArrowCodec(_VLenBase):
    """The strings ZEP's Arrow-style offsets layout for the ``string`` and ``bytes`` data types.

    ``offsets``: ``"int32"`` (default) or ``"int64"``; a chunk whose data exceeds the int32
    range cannot be written with int32 offsets. `zdt.codecs.arrow.chunk_to_arrow` turns an encoded
    chunk into a pyarrow array without copying.
    """

    _name = "zdt.vlen_arrow"
    _allowed = STRING_TYPES | BYTES_TYPES
    _layout = vlen.ARROW

    offsets: str = "int32"

    def __init__(self, *, offsets: str = "int32") -> None:
        if not isinstance(offsets, str) or offsets not in vlen.OFFSET_WIDTHS:
            raise ConfigError(f"{self._name}: offsets {offsets!r} is not one of 'int32', 'int64'",
                              config_key="offsets")
        object.__setattr__(self, "offsets", offsets)

    @property
    def _width(self) -> int:  # type: ignore[override]
        return vlen.OFFSET_WIDTHS[self.offsets]

    @classmethod
    def from_dict(cls, data: dict[str, JSON]) -> Self:
        config = parse_envelope(data, cls._name, require_configuration=False)
        return cls(**check_keys(config, ("offsets",), cls._name))

    def to_dict(self) -> dict[str, JSON]:
        if self.offsets == "int32":
            return {"name": self._name}
        return {"name": self._name, "configuration": {"offsets": self.offsets}}


# --- making zarr use these codecs -------------------------------------------------------------------

_ZDT = {"vlen-utf8": "zdt.codecs.zarr.vlen.VLenUTF8Codec",
        "vlen-bytes": "zdt.codecs.zarr.vlen.VLenBytesCodec"}
_ZARR = {"vlen-utf8": "zarr.codecs.vlen_utf8.VLenUTF8Codec",
         "vlen-bytes": "zarr.codecs.vlen_utf8.VLenBytesCodec"}


def _string_serializer(dtype: Any, serializer: Any) -> ArrayBytesCodec | None:
    """New string / bytes arrays get zdt's codecs (see zdt.zarr_compat.set_string_serializer)."""
    name = serializer.to_dict()["name"]
    if name == "vlen-utf8":
        return VLenUTF8Codec()
    if name == "vlen-bytes":
        return VLenBytesCodec()
    return None


def _state() -> tuple[dict[str, Any], bool]:
    import zarr

    return ({k: zarr.config.get(f"codecs.{k}", None) for k in _ZDT},
            zarr_compat.string_serializer() is not None)


class use_string_codecs:
    """Make zarr use zdt's vlen-utf8 / vlen-bytes codecs (``enable=False``: zarr's own).

    Reading and writing existing arrays follow zarr's config (``codecs.vlen-utf8``,
    ``codecs.vlen-bytes``); new string arrays get zdt's codecs as their serializer. The switch
    lasts for the process; used as a context manager, the previous state comes back on exit::

        zdt.use_string_codecs()            # from now on
        with zdt.use_string_codecs():      # only inside the block
            ...
        zdt.use_string_codecs(False)       # zarr's own again
    """

    def __init__(self, enable: bool = True) -> None:
        import zarr

        self._previous = _state()
        zarr.config.update({"codecs": dict(_ZDT if enable else _ZARR)})
        zarr_compat.set_string_serializer(_string_serializer if enable else None)

    def __enter__(self) -> use_string_codecs:
        return self

    def __exit__(self, *exc: object) -> None:
        import zarr

        config, patched = self._previous
        # a key that was not set before goes back to zarr's own class
        zarr.config.update({"codecs": {k: (v if v is not None else _ZARR[k]) for k, v in config.items()}})
        zarr_compat.set_string_serializer(_string_serializer if patched else None)
