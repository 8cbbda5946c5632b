"""packbits (zarr-extensions codecs/packbits): elements stored at their real bit width.

Configuration, with the README's key names (its schema.json names them start_bit / end_bit
and start_byte / end_byte; zarrs, the other implementation, follows the README too):

* ``padding_encoding``: ``"none"`` (default), ``"first_byte"`` or ``"last_byte"``: whether a
  byte holding the number of zero bits that pad the stream (0..7) is prepended / appended;
* ``first_bit``, ``last_bit``: the bits of each component that are kept (default 0 and N - 1,
  N the component's width; null means the default). ``last_bit < first_bit`` or
  ``last_bit >= N`` is an error.

Each component (element, or real / imaginary part) takes b = last_bit - first_bit + 1 bits;
element i occupies bits [i*k, (i+1)*k) of the stream, k = components * b; stream bit j is bit
(j mod 8) of byte j // 8 counted from the least significant bit (the spec does not say; zarrs
writes it so; numcodecs' bool-only PackBits, which the README calls compatible, packs the most
significant bit first, so only its padding byte matches). Decoding puts the bits back at
first_bit, sign-extends signed integers from last_bit and zero-extends everything else.

Data types: bool (1 bit), int2 / uint2 (2), int4 / uint4 / float4_e2m1fn (4), float6_* (6),
the 8- to 64-bit integers, float32 / float64, bfloat16, complex64 / complex128 (two
components) as the README lists them; also float16 and the float8 types (the README does not
list them; zarrs and zdt take them as N-bit values like the others).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from zdt.kernels import _packbits
from zdt.codecs.config_json import check_keys
from zdt.errors import ConfigError
from zdt.formats import FORMATS

CODEC = "packbits"
PADDING = {"none": 0, "first_byte": 1, "last_byte": 2}


@dataclass(frozen=True)
class Layout:
    """How packbits sees elements of one data type."""

    name: str           # data type name, for messages
    bits: int           # N: bits per component
    nbytes: int         # bytes per component in memory
    components: int     # 1, or 2 for complex types
    signed: bool        # sign-extend on decode


def layout_for(dtype: np.dtype) -> Layout:
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return Layout("bool", 1, 1, 1, False)
    if dtype.kind == "c":
        half = dtype.itemsize // 2
        return Layout(dtype.name, 8 * half, half, 2, False)
    fmt = FORMATS.get(dtype.name)
    if fmt is None:
        raise ConfigError(f"{CODEC}: data type {dtype.name!r} cannot be packed: packbits takes "
                          f"bool, integers, floats and complex numbers", config_key="data_type")
    return Layout(fmt.name, fmt.bits, fmt.itemsize, 1, fmt.is_int and fmt.signed)


def _parse_bit(value: object, key: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{CODEC}: {key} must be a non-negative integer (or null), got {value!r}",
                          config_key=key)
    return value


@dataclass(frozen=True)
class PackBitsConfig:
    padding_encoding: str = "none"
    first_bit: int | None = None
    last_bit: int | None = None

    @classmethod
    def create(cls, *, padding_encoding: str = "none", first_bit: int | None = None,
               last_bit: int | None = None) -> PackBitsConfig:
        if not isinstance(padding_encoding, str) or padding_encoding not in PADDING:
            raise ConfigError(f"{CODEC}: padding_encoding {padding_encoding!r} is not one of "
                              f"{', '.join(map(repr, PADDING))}", config_key="padding_encoding")
        first, last = _parse_bit(first_bit, "first_bit"), _parse_bit(last_bit, "last_bit")
        if first is not None and last is not None and last < first:
            raise ConfigError(f"{CODEC}: last_bit ({last}) is less than first_bit ({first})",
                              config_key="last_bit")
        return cls(padding_encoding, first, last)

    @classmethod
    def from_json(cls, config: Mapping[str, Any]) -> PackBitsConfig:
        # null is allowed for first_bit / last_bit: the README says it means the default
        keys = ("padding_encoding", "first_bit", "last_bit")
        nulls = {k: None for k in ("first_bit", "last_bit") if k in config and config[k] is None}
        rest = check_keys({k: v for k, v in config.items() if k not in nulls}, keys, CODEC)
        return cls.create(**rest)

    def to_json(self) -> dict[str, Any]:
        config: dict[str, Any] = {}
        if self.padding_encoding != "none":
            config["padding_encoding"] = self.padding_encoding
        if self.first_bit:
            config["first_bit"] = self.first_bit
        if self.last_bit is not None:
            config["last_bit"] = self.last_bit
        return config

    def bit_range(self, layout: Layout) -> tuple[int, int]:
        """(first_bit, last_bit) for a data type; ConfigError if they do not fit it."""
        first = self.first_bit or 0
        last = layout.bits - 1 if self.last_bit is None else self.last_bit
        if last >= layout.bits or first >= layout.bits:
            key = "last_bit" if last >= layout.bits else "first_bit"
            raise ConfigError(f"{CODEC}: {key} {max(first, last)} is outside the {layout.bits} "
                              f"bits of {layout.name}", config_key=key)
        if last < first:
            raise ConfigError(f"{CODEC}: last_bit ({last}) is less than first_bit ({first})",
                              config_key="last_bit")
        return first, last

    def encoded_size(self, dtype: np.dtype, count: int) -> int:
        layout = layout_for(dtype)
        first, last = self.bit_range(layout)
        size, _ = _packbits.packed_size(count * layout.components, last - first + 1)
        return size + (self.padding_encoding != "none")

    def encode(self, arr: np.ndarray) -> np.ndarray:
        """One chunk -> its bytes (uint8 array); elements in C order."""
        _check_host()
        arr = np.asarray(arr)
        layout = layout_for(arr.dtype)
        first, last = self.bit_range(layout)
        if not arr.dtype.isnative:
            arr = arr.astype(arr.dtype.newbyteorder("="))
        flat = np.ascontiguousarray(arr).reshape(-1).view(np.uint8)
        return _packbits.pack(flat, arr.size * layout.components, layout.nbytes, first,
                              last - first + 1, PADDING[self.padding_encoding])

    def decode(self, buf: object, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        """A chunk's bytes -> an array of `dtype` and `shape` (ValueError if corrupt)."""
        _check_host()
        dtype = np.dtype(dtype).newbyteorder("=") if np.dtype(dtype).itemsize > 1 else np.dtype(dtype)
        layout = layout_for(dtype)
        first, last = self.bit_range(layout)
        raw = np.frombuffer(buf, dtype=np.uint8) if not isinstance(buf, np.ndarray) else buf
        raw = np.ascontiguousarray(raw).reshape(-1).view(np.uint8)
        count = int(np.prod(shape))
        out = np.empty(count, dtype=dtype)
        _packbits.unpack(raw, count * layout.components, layout.nbytes, first, last - first + 1,
                         last if layout.signed else -1, PADDING[self.padding_encoding],
                         out.view(np.uint8), CODEC)
        return out.reshape(shape)


def _check_host() -> None:
    if sys.byteorder != "little":
        raise NotImplementedError("packbits: zdt's implementation needs a little-endian host")
