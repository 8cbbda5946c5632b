"""zdt.predict quantizes (encoder) and reconstructs (decoder, stage 3) the interpolation
predictors' spans on the widest vector path the CPU has (AVX-512, AVX2, else element by
element; ZDT_PREDICT_SIMD narrows it). Every path must write the same chunks and decode them
to the same bits: predict_digest's quick matrix (shapes, float32 and float64, every predictor
and stage, bounds, fill values, NaN, infinities and outliers; its digests cover the decodes)
under each."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def digests(simd: str) -> list[str]:
    env = dict(os.environ, ZDT_PREDICT_SIMD=simd)
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "predict_digest.py"), "--quick"],
                         env=env, capture_output=True, text=True, check=True)
    lines = out.stdout.splitlines()
    assert len(lines) == 3 and all("chunks" in line for line in lines), out.stdout
    return lines


def test_every_vector_path_writes_the_chunks_of_the_scalar_one():
    scalar = digests("none")
    assert digests("avx2") == scalar
    assert digests("") == scalar
