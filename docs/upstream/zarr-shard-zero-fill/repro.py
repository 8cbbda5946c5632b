"""A sharded float32 array whose inner codecs are scale_offset + cast_value uint16 (NaN, the
fill value, mapped to a code of its own): valid under the specs, and opened by zarr-python
3.2; zarr-python 3.4 refuses to open it. Nothing of zdt: the metadata is written by hand."""

import json
import sys
import tempfile
from pathlib import Path

import zarr

meta = {
    "zarr_format": 3, "node_type": "array", "shape": [40, 60], "data_type": "float32",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [20, 60]}},
    "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
    "fill_value": "NaN",
    "codecs": [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [10, 20],
        "codecs": [
            {"name": "scale_offset", "configuration": {"offset": 257, "scale": 10}},
            {"name": "cast_value", "configuration": {"data_type": "uint16", "scalar_map": {
                "encode": [["NaN", 456]], "decode": [[456, "NaN"]]}}},
            {"name": "bytes", "configuration": {"endian": "little"}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                         {"name": "crc32c"}],
        "index_location": "end"}}],
}
with tempfile.TemporaryDirectory() as d:
    (Path(d) / "zarr.json").write_text(json.dumps(meta))
    print(zarr.__version__, file=sys.stderr)
    a = zarr.open_array(d)          # 3.4.2: ValueError: Value -2570 out of range [0, 65535]
    print(a[...].shape)             # (every element the fill value: no chunk written)
