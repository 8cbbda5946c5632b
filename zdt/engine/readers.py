"""Who will read the output: the codecs and data types each reader decodes, so that an encoding
uses only what every reader named can open (``readers=`` / ``--readers``).

What each reader decodes was found by writing arrays with every codec and configuration and
reading them back with each reader, strictly (zarrs-python with ``codec_pipeline.strict``, so
no fall-back to Python codecs counts), values compared bit for bit; docs/readers.md has the
table, the versions and the errors the others give.

    zarr-python   zarr-python >= 3.2 with numcodecs and pcodec: the core codecs, cast_value,
                  scale_offset (built in since 3.2), the numcodecs.* codecs (numcodecs.bitround,
                  numcodecs.pcodec, ...); NumPy's numeric types
    zdt           zarr-python with zdt installed: the above, and zdt's bitround, packbits,
                  zdt.predict and the low-precision data types (bfloat16, float8 / float6 /
                  float4, int2 / int4)
    zarrs         zarrs 0.23 (zarrs-python 0.2): the core codecs, numcodecs.pcodec for 16- to
                  64-bit types, numcodecs.shuffle; no cast_value, scale_offset or bitround (its
                  numcodecs.fixedscaleoffset decodes in float32 arithmetic: not bit-exact)
    tensorstore   TensorStore 0.1.86: bytes, transpose, sharding_indexed, crc32c, blosc, gzip,
                  zstd
    any           what all of them decode: the core codecs

A reader that decodes no lossy filter still gets the bound: the values are rounded in memory
(through the same filters, encoded and decoded) and stored as plain numbers with codecs it
reads, which compress the rounded values well (pcodec finds the grid or the zeroed bits).
"""

from __future__ import annotations

from dataclasses import dataclass

from zdt.errors import UsageError

CORE = frozenset({"bytes", "transpose", "sharding_indexed", "crc32c", "blosc", "gzip", "zstd"})
NUMPY_TYPES = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                         "float16", "float32", "float64"})


@dataclass(frozen=True)
class Reader:
    name: str
    codecs: frozenset           # codec names it decodes
    filters: bool               # whether it decodes lossy array -> array codecs (cast_value, ...)
    types: frozenset | None     # the data types a filter may produce (None: any zdt writes)
    pcodec_min_bytes: int = 2   # numcodecs.pcodec only for types at least this wide
    # numcodecs.pcodec behind a transpose in a partial edge chunk (zarrs 0.2.3 refuses it:
    # "indexer references array indices [64, 48] which are out-of-bounds of array shape
    # [48, 64]"; whole chunks it reads)
    transposed_pcodec_edges: bool = True


READERS = {
    "zarr-python": Reader("zarr-python", CORE | {"cast_value", "scale_offset", "numcodecs.bitround",
                                                 "numcodecs.pcodec", "numcodecs.shuffle"},
                          True, NUMPY_TYPES),
    "zdt": Reader("zdt", CORE | {"cast_value", "scale_offset", "bitround", "numcodecs.bitround",
                                 "numcodecs.pcodec", "numcodecs.shuffle", "packbits",
                                 "zdt.predict"},
                  True, None),
    "zarrs": Reader("zarrs", CORE | {"numcodecs.pcodec", "numcodecs.shuffle", "packbits"},
                    False, NUMPY_TYPES, transposed_pcodec_edges=False),
    "tensorstore": Reader("tensorstore", CORE, False, NUMPY_TYPES),
}
ALIASES = {"zarr": "zarr-python", "zarr_python": "zarr-python", "ts": "tensorstore"}


@dataclass(frozen=True)
class Readers:
    """The readers named: an encoding uses what all of them decode."""

    names: tuple[str, ...]

    @classmethod
    def parse(cls, value: str | list | tuple | None) -> Readers:
        """``"zarr-python"`` (the default), ``"zarrs,tensorstore"``, a list, or ``"any"``."""
        if value is None:
            return cls(("zarr-python",))
        items = value.split(",") if isinstance(value, str) else list(value)
        names: list[str] = []
        for item in items:
            name = ALIASES.get(str(item).strip().lower(), str(item).strip().lower())
            if name == "any":
                names += list(READERS)
            elif name in READERS:
                names.append(name)
            else:
                raise UsageError(f"readers={item!r}: not a reader zdt knows (choose from "
                                 f"{', '.join(READERS)}, any)")
        if not names:
            raise UsageError("readers=: name at least one reader")
        return cls(tuple(dict.fromkeys(names)))

    def __str__(self) -> str:
        return ",".join(self.names)

    @property
    def readers(self) -> list[Reader]:
        return [READERS[n] for n in self.names]

    @property
    def filters(self) -> bool:
        """Whether lossy array -> array codecs may be stored (else values are rounded in memory)."""
        return all(r.filters for r in self.readers)

    def decodes(self, codec_name: str) -> bool:
        return all(codec_name in r.codecs for r in self.readers)

    def type_ok(self, data_type: str) -> bool:
        """Whether a filter may produce this data type for every reader."""
        return all(r.types is None or data_type in r.types for r in self.readers)

    def transposed_pcodec_ok(self, shape: tuple, chunks: tuple) -> bool:
        """Whether every reader reads numcodecs.pcodec behind a transpose in this array (with
        partial edge chunks, zarrs does not)."""
        edges = any(n % c for n, c in zip(shape, chunks, strict=True) if c)
        return not edges or all(r.transposed_pcodec_edges for r in self.readers)

    def pcodec_ok(self, itemsize: int) -> bool:
        return self.decodes("numcodecs.pcodec") and all(itemsize >= r.pcodec_min_bytes for r in self.readers)

    @property
    def bitround_name(self) -> str | None:
        """The name a bitround filter is written under for these readers (its decoding is the
        identity: zdt encodes it either way), or None when a reader decodes neither."""
        for name in ("bitround", "numcodecs.bitround"):
            if self.decodes(name):
                return name
        return None
