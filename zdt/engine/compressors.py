"""``--compressor``: what compresses the chunks of the arrays zdt writes.

``keep`` (the default): each array's own compressors; ``none``; ``zstd[:LEVEL]`` (-131072 ..
22, default 3); ``blosc[-CNAME][:LEVEL]`` (CNAME lz4, lz4hc, zstd (default), zlib, blosclz;
LEVEL 0 .. 9, default 5; byte shuffle); ``gzip[:LEVEL]`` (0 .. 9, default 5); or zarr v3 codec
JSON (a codec or a list; zarr v3 arrays only). Names and levels are checked before anything is
read or written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from zdt.errors import UsageError

LEVELS = {"zstd": (-131072, 22, 3), "blosc": (0, 9, 5), "gzip": (0, 9, 5)}
BLOSC_CNAMES = ("lz4", "lz4hc", "zstd", "zlib", "blosclz")


@dataclass(frozen=True)
class Compression:
    kind: str               # "keep", "none", "zstd", "blosc", "gzip", "json"
    level: int | None = None
    cname: str = "zstd"     # blosc
    codecs: tuple = ()      # "json": zarr v3 codec JSON

    @classmethod
    def parse(cls, text: str | None) -> Compression:
        if text is None or text == "keep":
            return cls("keep")
        if text == "none":
            return cls("none")
        name, _, level_text = text.partition(":")
        base, _, cname = name.partition("-")
        if base in LEVELS and (not cname or base == "blosc"):
            lo, hi, default = LEVELS[base]
            if cname and cname not in BLOSC_CNAMES:
                raise UsageError(f"--compressor {text!r}: blosc's compressors are "
                                   f"{', '.join(BLOSC_CNAMES)}")
            if not level_text:
                level = default
            else:
                try:
                    level = int(level_text)
                except ValueError:
                    raise UsageError(f"--compressor {text!r}: the level must be an integer "
                                       f"from {lo} to {hi}") from None
                if not lo <= level <= hi:
                    raise UsageError(f"--compressor {text!r}: {base} levels are {lo} to {hi}")
            return cls(base, level, cname or "zstd")
        if text.lstrip().startswith(("{", "[")):
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                raise UsageError(f"--compressor: not JSON ({exc})") from None
            codecs = value if isinstance(value, list) else [value]
            if not all(isinstance(c, dict) and isinstance(c.get("name"), str) for c in codecs):
                raise UsageError('--compressor JSON: codecs like {"name": "zstd", '
                                   '"configuration": {"level": 3}}')
            return cls("json", codecs=tuple(codecs))
        raise UsageError(f"--compressor {text!r} is not a compressor zdt knows: use keep, none, "
                           "zstd[:LEVEL], blosc[-CNAME][:LEVEL], gzip[:LEVEL] or zarr v3 codec JSON")

    def __str__(self) -> str:
        if self.kind in ("keep", "none"):
            return self.kind
        if self.kind == "json":
            return json.dumps(list(self.codecs))
        name = f"blosc-{self.cname}" if self.kind == "blosc" and self.cname != "zstd" else self.kind
        return f"{name}:{self.level}"

    def for_array(self, arr: Any) -> Any:
        """The compressors of the output array: zarr v3 codec objects / JSON (a list, or None)
        for a v3 array, a numcodecs codec (or None) for a format 2 one."""
        v2 = arr.metadata.zarr_format == 2
        if self.kind == "keep":
            if v2:
                return arr.metadata.compressor
            return list(arr.compressors) or None
        if self.kind == "none":
            return None
        if self.kind == "json":
            if v2:
                raise UsageError(f"/{arr.path}: --compressor as JSON is zarr v3 codec JSON and "
                                   "this array is zarr format 2: use zstd[:LEVEL], blosc or gzip")
            return list(self.codecs)
        if v2:
            import numcodecs

            if self.kind == "zstd":
                return numcodecs.Zstd(level=self.level)
            if self.kind == "gzip":
                return numcodecs.GZip(level=self.level)
            return numcodecs.Blosc(cname=self.cname, clevel=self.level, shuffle=numcodecs.Blosc.SHUFFLE)
        from zarr.codecs import BloscCodec, GzipCodec, ZstdCodec

        if self.kind == "zstd":
            return [ZstdCodec(level=self.level)]
        if self.kind == "gzip":
            return [GzipCodec(level=self.level)]
        return [BloscCodec(cname=self.cname, clevel=self.level, shuffle="shuffle")]
