"""The last stage of an encoding: what compresses the chunks of the arrays zdt writes
(``compressor=`` / ``--compressor``).

``auto`` (the default): chosen per array with the rest of the encoding, by the bytes each
writes: none, zstd (levels 3 and 9), blosc-zstd with byte shuffle or bit shuffle, gzip, and
numcodecs.pcodec as the serializer where the readers decode it; ``keep``: each array's own
compressors; ``none``; ``zstd[:LEVEL]`` (-131072 .. 22, default 3); ``blosc[-CNAME][:LEVEL]``
(CNAME lz4, lz4hc, zstd (default), zlib, blosclz; LEVEL 0 .. 9, default 5; byte shuffle);
``gzip[:LEVEL]`` (0 .. 9, default 5); or zarr v3 codec JSON (a codec or a list; zarr v3 arrays
only). Names and levels are checked before anything is read or written.

A compressor setting is zarr v3 codec JSON (a list) everywhere in the engine and in plans; a
zarr format 2 array gets the numcodecs codec of the same setting (`to_v2`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from zdt.errors import UsageError

LEVELS = {"zstd": (-131072, 22, 3), "blosc": (0, 9, 5), "gzip": (0, 9, 5)}
BLOSC_CNAMES = ("lz4", "lz4hc", "zstd", "zlib", "blosclz")


def _zstd(level: int) -> dict:
    return {"name": "zstd", "configuration": {"level": level, "checksum": False}}


def _blosc(cname: str, level: int, shuffle: str) -> dict:
    return {"name": "blosc", "configuration": {"cname": cname, "clevel": level, "shuffle": shuffle,
                                               "blocksize": 0}}


def _untyped(codec: dict) -> dict:
    if codec.get("name") != "blosc":
        return codec
    return {**codec, "configuration": {k: v for k, v in codec.get("configuration", {}).items()
                                       if k != "typesize"}}


def _gzip(level: int) -> dict:
    return {"name": "gzip", "configuration": {"level": level}}


# what `auto` measures after the bytes serializer (pcodec is a serializer: nothing after it)
AUTO = ([], [_zstd(3)], [_zstd(9)], [_blosc("zstd", 5, "shuffle")],
        [_blosc("zstd", 5, "bitshuffle")], [_gzip(6)])


@dataclass(frozen=True)
class Compression:
    kind: str               # "auto", "keep", "none", "zstd", "blosc", "gzip", "json"
    level: int | None = None
    cname: str = "zstd"     # blosc
    codecs: tuple = ()      # "json": zarr v3 codec JSON

    @classmethod
    def parse(cls, text: str | None) -> Compression:
        if text is None or text == "auto":
            return cls("auto")
        if text == "keep":
            return cls("keep")
        if text == "none":
            return cls("none")
        name, _, level_text = text.partition(":")
        base, _, cname = name.partition("-")
        if base in LEVELS and (not cname or base == "blosc"):
            lo, hi, default = LEVELS[base]
            if cname and cname not in BLOSC_CNAMES:
                raise UsageError(f"compressor={text!r}: blosc's compressors are "
                                   f"{', '.join(BLOSC_CNAMES)}")
            if not level_text:
                level = default
            else:
                try:
                    level = int(level_text)
                except ValueError:
                    raise UsageError(f"compressor={text!r}: the level must be an integer "
                                       f"from {lo} to {hi}") from None
                if not lo <= level <= hi:
                    raise UsageError(f"compressor={text!r}: {base} levels are {lo} to {hi}")
            return cls(base, level, cname or "zstd")
        if text.lstrip().startswith(("{", "[")):
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                raise UsageError(f"compressor=: not JSON ({exc})") from None
            codecs = value if isinstance(value, list) else [value]
            if not all(isinstance(c, dict) and isinstance(c.get("name"), str) for c in codecs):
                raise UsageError('compressor= JSON: codecs like {"name": "zstd", '
                                   '"configuration": {"level": 3}}')
            return cls("json", codecs=tuple(codecs))
        raise UsageError(f"compressor={text!r} is not a compressor zdt knows: use auto, keep, "
                         "none, zstd[:LEVEL], blosc[-CNAME][:LEVEL], gzip[:LEVEL] or zarr v3 codec "
                         "JSON")

    def __str__(self) -> str:
        if self.kind in ("auto", "keep", "none"):
            return self.kind
        if self.kind == "json":
            return json.dumps(list(self.codecs))
        name = f"blosc-{self.cname}" if self.kind == "blosc" and self.cname != "zstd" else self.kind
        return f"{name}:{self.level}"

    @property
    def searched(self) -> bool:
        """Whether the serializer and compressor are chosen per array (``auto``)."""
        return self.kind == "auto"

    def choices(self, arr: Any) -> list[list[dict]]:
        """The compressor settings to measure for an array (v3 JSON lists)."""
        if self.kind == "auto":
            return [list(c) for c in AUTO]
        return [self.chain(arr)]

    def chain(self, arr: Any) -> list[dict]:
        """The one setting this compression gives an array (``auto``: the array's own, what
        an array copied as it is keeps)."""
        if self.kind in ("keep", "auto"):
            if arr.metadata.zarr_format == 2:
                return from_v2(arr.metadata.compressor)
            # (less the typesize zarr gave blosc from the array's data type: the output's
            # stored elements may be narrower; BackEnd.typed gives it theirs)
            return [_untyped(c.to_dict()) for c in arr.compressors]
        if self.kind == "none":
            return []
        if self.kind == "json":
            if arr.metadata.zarr_format == 2:
                raise UsageError(f"/{arr.path}: compressor= as JSON is zarr v3 codec JSON and "
                                 "this array is zarr format 2: use zstd[:LEVEL], blosc or gzip")
            return [dict(c) for c in self.codecs]
        if self.kind == "zstd":
            return [_zstd(self.level)]
        if self.kind == "gzip":
            return [_gzip(self.level)]
        return [_blosc(self.cname, self.level, "shuffle")]

    def for_array(self, arr: Any) -> Any:
        """The compressors of the output array as create_array takes them: v3 codec JSON (a
        list, or None) for a v3 array, a numcodecs codec (or None) for a format 2 one."""
        chain = self.chain(arr)
        if arr.metadata.zarr_format == 2:
            return to_v2(chain)
        return chain or None


def to_v2(chain: list[dict]) -> Any:
    """A compressor setting (v3 JSON) as the numcodecs codec of a zarr format 2 array."""
    import numcodecs

    if not chain:
        return None
    if len(chain) > 1:
        raise UsageError(f"a zarr format 2 array has one compressor, not {len(chain)}")
    name, config = chain[0]["name"], dict(chain[0].get("configuration", {}))
    if name == "zstd":
        return numcodecs.Zstd(level=config.get("level", 0), checksum=config.get("checksum", False))
    if name == "gzip":
        return numcodecs.GZip(level=config.get("level", 5))
    if name == "blosc":
        shuffle = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}[config.get("shuffle", "shuffle")]
        return numcodecs.Blosc(cname=config.get("cname", "zstd"), clevel=config.get("clevel", 5),
                               shuffle=shuffle, blocksize=config.get("blocksize", 0))
    if name.startswith("numcodecs."):
        return numcodecs.get_codec({"id": name[len("numcodecs."):], **config})
    raise UsageError(f"compressor {name!r} has no zarr format 2 form here")


def from_v2(codec: Any) -> list[dict]:
    """A format 2 array's numcodecs compressor (or None) as a compressor setting."""
    if codec is None:
        return []
    config = {k: v for k, v in codec.get_config().items() if k != "id"}
    return [{"name": f"numcodecs.{codec.codec_id}", "configuration": config}]
