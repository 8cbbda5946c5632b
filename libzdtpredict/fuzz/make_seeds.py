"""Writes the golden chunks (tests/fixtures/predict) as seeds of fuzz_decode: each behind the
16 bytes that give its parameters (fuzz_decode.c says their layout). Standard library only.

    python3 libzdtpredict/fuzz/make_seeds.py tests/fixtures/predict SEED_DIR
"""
import json
import struct
import sys
from pathlib import Path

DTYPES = ["float32", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32"]
BOUNDS = [0.01, 0.003, 0.001, 0.5, 2.0, 7.5, 0.004, 0.02, 0.05, 0.1, 4.0, 500.0, 0.0]
FILLS = [-9999.0, "NaN", 3, -7, 1.0000000200408773e+20]


def main(golden: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    count = 0
    for manifest in sorted(golden.glob("*/manifest.json")):
        for name, case in json.loads(manifest.read_text())["cases"].items():
            shape = case["shape"]
            config = case["config"]
            if len(shape) > 5 or any(n > 65535 for n in shape):
                continue
            fill = config.get("fill", case["fill"])
            flags = (case["face"] == "numcodecs") | (2 if fill is not None else 0) | (
                4 if "mask" in config else 0)
            bound = BOUNDS.index(config["abs_error"]) if "abs_error" in config else 12
            extents = (shape + [0] * 5)[:5]
            head = struct.pack("<BBB5HBBB", flags, DTYPES.index(case["dtype"]) + 1, len(shape),
                               *extents, bound, FILLS.index(fill) if fill is not None else 0, 0)
            data = (manifest.parent / f"{name}.bin").read_bytes()
            (out / f"{manifest.parent.name}-{name}").write_bytes(head + data)
            count += 1
    print(f"{count} seeds in {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
