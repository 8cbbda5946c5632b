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
reads, which compress the rounded values well (pcodec finds the grid or the zeroed bits). So
does a chain that a reader of filters rejects (`Reader.reads_chain`): zarr-python 3.2-3.4
validates every array -> array codec against the array's own data type, not the type the codec
before it produced (so a ``scale_offset`` of scale 1/11 behind ``cast_value float64`` on an
int16 array is refused), and cannot read a ``"0x.."`` bit pattern in ``scalar_map``
(docs/upstream/ has the reports).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

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
    # zarr-python 3.2.0-3.4.2: every array -> array codec's numbers are read as the array's
    # data type, whatever type the codec before it produced
    filters_in_array_type: bool = False
    hex_maps: bool = True       # "0x.." bit patterns in cast_value's scalar_map
    # zarr-python 3.4: a shard's inner codecs are validated with the data type's default value
    # (0), not the array's fill value, carried through each codec: a cast_value that sends 0
    # out of its target's range makes the array unopenable ("Value -2570 out of range")
    shard_zero_fill: bool = False
    # the reader's own package (as pip names it) and what it needs beside it for a codec
    package: str = ""
    extras: tuple = ()          # (codec name, package) pairs

    def reads_chain(self, filters: tuple | list, data_type: str, sharded: bool = False) -> bool:
        """Whether this reader opens an array of `data_type` whose array -> array codecs are
        `filters` (zarr v3 JSON; `sharded`: a shard's inner codecs); the codec names are
        checked apart (Readers.decodes)."""
        if not self.filters and filters:
            return False
        if not self.hex_maps and any(_hex_in_map(c) for c in filters):
            return False
        if sharded and self.shard_zero_fill and not zero_passes(filters, data_type):
            return False
        if self.filters_in_array_type:
            first_cast = next((i for i, c in enumerate(filters) if c.get("name") == "cast_value"), None)
            if first_cast is not None:
                return all(_numbers_fit(c, data_type) for c in filters[first_cast + 1:])
        return True


def _hex_in_map(codec: dict) -> bool:
    smap = (codec.get("configuration") or {}).get("scalar_map") or {}
    return any(isinstance(v, str) and v.lower().startswith("0x")
               for pairs in smap.values() for pair in pairs for v in pair)


def zero_passes(filters: tuple | list, data_type: str) -> bool:
    """Whether 0 of `data_type` goes through these array -> array codecs without an error, as
    zarr-python carries a fill value through them: zdt's own codecs encode it (scale_offset's
    arithmetic; cast_value's scalar_map, rounding, the target's range and out_of_range)."""
    import numpy as np

    from zdt.engine.arrays import v2_filters

    if data_type not in NUMPY_TYPES:
        return True                 # (types zarr-python does not have: no such reader)
    x = np.zeros(1, np.dtype(data_type))
    try:
        for codec in v2_filters([c for c in filters if c.get("name") in ("scale_offset", "cast_value")],
                                x.dtype):
            x = codec.encode(x)
    except ValueError:
        return False
    return True


def _numbers_fit(codec: dict, data_type: str) -> bool:
    """Whether the numbers a reader reads as the array's data type (scale_offset's offset and
    scale; cast_value's source-side scalar_map entries) are values of it."""
    from zdt.formats import FORMATS, json_scalar

    conf = codec.get("configuration") or {}
    if codec.get("name") == "scale_offset":
        values = [conf[k] for k in ("offset", "scale") if k in conf]
    elif codec.get("name") == "cast_value":
        smap = conf.get("scalar_map") or {}
        values = [p[0] for p in smap.get("encode", [])] + [p[1] for p in smap.get("decode", [])]
    else:
        return True
    fmt = FORMATS.get(data_type)
    if fmt is None:
        return False
    try:
        for v in values:
            json_scalar.decode(v, fmt, what="value", exact=codec.get("name") == "cast_value")
    except ValueError:
        return False
    return True


READERS = {
    "zarr-python": Reader("zarr-python", CORE | {"cast_value", "scale_offset", "numcodecs.bitround",
                                                 "numcodecs.pcodec", "numcodecs.shuffle",
                                                 "numcodecs.fixedscaleoffset"},
                          True, NUMPY_TYPES, filters_in_array_type=True, hex_maps=False,
                          shard_zero_fill=True,
                          package="zarr>=3.2",
                          extras=(("cast_value", "cast-value-rs"), ("numcodecs.pcodec", "pcodec"))),
    "zdt": Reader("zdt", CORE | {"cast_value", "scale_offset", "bitround", "numcodecs.bitround",
                                 "numcodecs.pcodec", "numcodecs.shuffle", "packbits",
                                 "zdt.predict", "numcodecs.fixedscaleoffset"},
                  True, None, package="zdt[zarr]"),
    "zarrs": Reader("zarrs", CORE | {"numcodecs.pcodec", "numcodecs.shuffle", "packbits"},
                    False, NUMPY_TYPES, transposed_pcodec_edges=False, package="zarrs"),
    "tensorstore": Reader("tensorstore", CORE, False, NUMPY_TYPES, package="tensorstore"),
}


def what_reads(codecs: list[dict], data_type: str) -> dict[str, str]:
    """For an array with these zarr v3 codecs (JSON, shards' inner codecs included) and data
    type: per reader, "pip install ..." of what reads it, or "no: ..." and why."""
    names = _names(codecs)
    shard = next((c for c in codecs if c.get("name") == "sharding_indexed"), None)
    inner = (shard.get("configuration") or {}).get("codecs") or [] if shard else []
    filters = [c for c in [*codecs, *inner] if c.get("name") in FILTER_NAMES]
    out = {}
    for r in READERS.values():
        missing = sorted(n for n in names if n not in r.codecs)
        if r.types is not None and data_type not in r.types:
            out[r.name] = f"no: {data_type} data"
        elif missing:
            out[r.name] = f"no: {', '.join(missing)}"
        elif not r.reads_chain(filters, data_type, sharded=shard is not None):
            out[r.name] = "no: it rejects this chain (docs/readers.md)"
        else:
            extra = [p for codec, p in r.extras if codec in names]
            out[r.name] = "pip install " + " ".join([f"'{r.package}'", *extra])
    return out


# array -> array codecs whose configuration a reader may reject (reads_chain)
FILTER_NAMES = {"cast_value", "scale_offset", "bitround", "numcodecs.bitround", "transpose",
                "numcodecs.fixedscaleoffset"}


def _names(codecs: list[dict]) -> set[str]:
    out = set()
    for c in codecs:
        out.add(c.get("name"))
        conf = c.get("configuration") or {}
        for key in ("codecs", "index_codecs"):
            out |= _names(conf.get(key) or [])
    return out
ALIASES = {"zarr": "zarr-python", "zarr_python": "zarr-python", "ts": "tensorstore"}


@dataclass(frozen=True)
class Readers:
    """The readers named: an encoding uses what all of them decode."""

    names: tuple[str, ...]
    # a chain some reader rejects is rounded in memory instead (False: left out, for an
    # encoding= that cannot round values before xarray writes them)
    in_memory: bool = True

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

    def reads_chain(self, filters: tuple | list, data_type: str, sharded: bool = False) -> bool:
        """Whether every reader opens these array -> array codecs on `data_type` (Reader.reads_chain)."""
        return all(r.reads_chain(filters, data_type, sharded) for r in self.readers)

    def without_in_memory(self) -> Readers:
        return replace(self, in_memory=False)

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
