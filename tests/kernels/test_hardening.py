"""What a hostile or careless user can throw at zdt, kept by CI: 8 threads sharing codec objects
and arrays, a memory-leak check over 1e5 calls per codec, every fuzz finding and seed replayed,
and the portable-C build's own contracts (checked arithmetic, CPU feature level)."""

from __future__ import annotations

import gc
import itertools
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
import zarr
from zarr.storage import MemoryStore

import zdt
from zdt.codecs import vlen
from zdt.codecs.packbits import PackBitsConfig

sys.path.insert(0, str(Path(__file__).parents[1] / "fuzz"))
from targets import TARGETS, seeds  # noqa: E402

THREADS = 8
SDT = np.dtypes.StringDType()
rng = np.random.default_rng(7)

# -------------------------------------------------------------------------------- codecs
# name -> (encode, decode, error-path call, input): the objects every thread shares


def _strings(n: int) -> np.ndarray:
    pool = ["", "rain", "日本語", "snow🙂", "x" * 100, "fog", "ß" * 7]
    return np.array([pool[i] for i in rng.integers(0, len(pool), n)], dtype=SDT)


def _objects_of_bytes(n: int) -> np.ndarray:
    out = np.empty(n, dtype=object)
    out[:] = [bytes(rng.integers(0, 256, int(k), dtype=np.uint8)) for k in rng.integers(0, 40, n)]
    return out


def codec_cases(n: int):
    """For every codec: shared codec objects and a shared input; encode / decode / an error."""
    f64 = np.round(rng.uniform(-50, 300, n), 2)
    f64[:: 17] = np.nan
    cast = zdt.CastValue(dtype="<f8", data_type="uint8", rounding="nearest-away", out_of_range="clamp",
                         scalar_map={"encode": [["NaN", 0]], "decode": [[0, "NaN"]]})
    cast_strict = zdt.CastValue(dtype="<f8", data_type="uint8")
    bf16 = zdt.CastValue(dtype="<f4", data_type="bfloat16", rounding="towards-negative")
    e4m3 = zdt.CastValue(dtype="<f8", data_type="float8_e4m3fn", out_of_range="clamp")
    so = zdt.ScaleOffset(dtype="<f8", offset=-10, scale=0.1)
    so_int = zdt.ScaleOffset(dtype="<i4", offset=1000, scale=3)
    i32 = rng.integers(-10_000, 10_000, n).astype(np.int32)
    f32 = rng.normal(0, 1e3, n).astype(np.float32)
    words = _strings(n)
    blobs = _objects_of_bytes(n)
    int4 = rng.integers(-8, 8, n).astype(np.int8).astype("int4")
    pack = PackBitsConfig.create(padding_encoding="last_byte")
    shape = (n,)
    return {
        "cast_value f64->u8": (cast.encode, lambda b: cast.decode(b), lambda: cast_strict.encode(f64), f64),
        "cast_value f32->bfloat16": (bf16.encode, bf16.decode, None, f32),
        "cast_value f64->float8_e4m3fn": (e4m3.encode, e4m3.decode, lambda: e4m3.encode(np.array([np.inf])), f64),
        "scale_offset f64": (so.encode, so.decode, None, f64),
        "scale_offset i32": (so_int.encode, so_int.decode,
                             lambda: so_int.encode(np.array([2 ** 30], dtype=np.int32)), i32),
        "vlen-utf8": (lambda a: vlen.encode(a, utf8=True).tobytes(),
                      lambda b: vlen.decode(b, shape, utf8=True),
                      lambda: vlen.decode(b"\x05\x00\x00\x00", shape, utf8=True), words),
        "vlen-bytes": (lambda a: vlen.encode(a, utf8=False, codec="vlen-bytes").tobytes(),
                       lambda b: vlen.decode(b, shape, utf8=False, codec="vlen-bytes"),
                       lambda: vlen.decode(b"\x01\x00\x00\x00\xff\xff\xff\x7f", (1,), utf8=False), blobs),
        "zdt.vlen_arrow": (lambda a: vlen.encode(a, utf8=True, layout=vlen.ARROW).tobytes(),
                           lambda b: vlen.decode(b, shape, utf8=True, layout=vlen.ARROW),
                           lambda: vlen.decode(b"\x00" * 63, shape, utf8=True, layout=vlen.ARROW), words),
        "packbits int4": (lambda a: pack.encode(a).tobytes(),
                          lambda b: pack.decode(b, np.dtype("int4"), shape),
                          lambda: pack.decode(b"\x00" * 3, np.dtype("int4"), (40,)), int4),
    }


def _bits(x) -> bytes:
    x = np.asarray(x)
    if x.dtype == object:
        return repr(x.tolist()).encode()
    if isinstance(x.dtype, np.dtypes.StringDType):
        return "\x00".join(x.tolist()).encode()
    return x.tobytes()


@pytest.mark.parametrize("name", list(codec_cases(8)))
def test_eight_threads_sharing_a_codec_match_one_thread_bit_for_bit(name):
    encode, decode, _, data = codec_cases(2_500)[name]
    # eight different chunks of one shape (the string and packbits decoders take the shape)
    chunks = [np.roll(data, 311 * k) for k in range(8)]
    serial = [(_bits(e := encode(c)), _bits(decode(e))) for c in chunks]
    results: list = [None] * THREADS
    barrier = threading.Barrier(THREADS)

    def work(t: int) -> None:
        barrier.wait()
        out = []
        for _ in range(3):
            for c in chunks[t % len(chunks):] + chunks[:t % len(chunks)]:
                e = encode(c)
                out.append((_bits(e), _bits(decode(e))))
        results[t] = out

    threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for t, out in enumerate(results):
        k = t % len(chunks)
        assert out == (serial[k:] + serial[:k]) * 3, f"thread {t} differs"


@pytest.mark.parametrize("pipeline", [None, "zdt.pipeline.ZdtCodecPipeline"])
def test_eight_threads_sharing_zarr_arrays_with_every_zdt_codec(pipeline):
    """Threads write disjoint chunks of, and read all of, shared arrays whose codecs are zdt's."""
    n, chunk = 16_000, 1_000
    arrays = {
        "cast+scale_offset": (np.round(rng.uniform(0, 25, n), 1), dict(
            dtype="float64", fill_value=np.nan,
            filters=[{"name": "scale_offset", "configuration": {"scale": 10}},
                     {"name": "cast_value", "configuration": {"data_type": "uint8", "scalar_map": {
                         "encode": [["NaN", 255]], "decode": [[255, "NaN"]]}}}])),
        "bfloat16": (rng.normal(0, 1, n).astype("bfloat16"), dict(dtype="bfloat16", fill_value=0)),
        "int4 packbits": (rng.integers(-8, 8, n).astype(np.int8).astype("int4"), dict(
            dtype="int4", fill_value=0, serializer={"name": "packbits", "configuration": {}})),
        "strings vlen_arrow": (_strings(n), dict(dtype=SDT, serializer=zdt.VLenArrowCodec())),
        "strings vlen-utf8": (_strings(n), dict(dtype=SDT, serializer=zdt.VLenUTF8Codec())),
    }
    config = {"codec_pipeline.path": pipeline} if pipeline else {}
    with zarr.config.set(config):
        for name, (data, kw) in arrays.items():
            serial = zarr.create_array(MemoryStore(), shape=(n,), chunks=(chunk,), compressors=None, **kw)
            serial[:] = data
            shared = zarr.create_array(MemoryStore(), shape=(n,), chunks=(chunk,), compressors=None, **kw)
            errors: list = []

            def work(t: int) -> None:
                try:
                    for i in range(t, n // chunk, THREADS):
                        shared[i * chunk:(i + 1) * chunk] = data[i * chunk:(i + 1) * chunk]
                    serial[:]  # concurrent reads of a shared array
                except Exception as exc:  # noqa: BLE001
                    errors.append(exc)

            threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            assert not errors, (name, errors)
            assert _bits(shared[:]) == _bits(serial[:]), name
            s, p = serial.store_path.store, shared.store_path.store
            assert {k: bytes(v.to_bytes()) for k, v in s._store_dict.items() if "c/" in k} == \
                   {k: bytes(v.to_bytes()) for k, v in p._store_dict.items() if "c/" in k}, name


# -------------------------------------------------------------------------------- leaks

CALLS = 100_000


def rss_bytes() -> int:
    """Resident set size now (Linux), else the peak so far (which a leak also raises)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


def growth(step, calls: int) -> int:
    """RSS growth over `calls` calls of step(i), after a warm-up of calls // 5."""
    for i in range(calls // 5):
        step(i)
    gc.collect()
    before = rss_bytes()
    for i in range(calls):
        step(i)
    gc.collect()
    return rss_bytes() - before


LIMIT = 2 << 20  # 2 MB over 1e5 calls: a leak of 21 bytes per call shows


def test_the_leak_check_sees_a_leak(tmp_path):
    """The instrument works: keeping 64 bytes per call is well over the limit. Measured in a
    fresh interpreter: in a worker that has run other tests, the free space their objects left
    in Python's allocator can take all the kept bytes without the RSS moving (seen once). It
    runs in an empty directory: `python -c` puts the working directory first on sys.path, and
    at the root of a checkout that is the unbuilt source tree."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); "
            "from test_hardening import CALLS, growth; kept = []; "
            "print(growth(lambda i: kept.append(b'%63d' % i), CALLS))")
    run = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stderr
    assert int(run.stdout.split()[-1]) > LIMIT


@pytest.mark.parametrize("name", list(codec_cases(8)))
def test_rss_stays_flat_over_1e5_encode_decode_and_error_calls(name):
    encode, decode, error, data = codec_cases(64)[name]
    encoded = encode(data)

    def step(i: int) -> None:
        kind = i % 3
        if kind == 0:
            encode(data)
        elif kind == 1 or error is None:
            decode(encoded)
        else:
            try:
                error()
            except ValueError:
                pass
            else:
                raise AssertionError(f"{name}: the error path did not raise")

    assert growth(step, CALLS) < LIMIT


# -------------------------------------------------------------------------------- fuzz corpus

CORPUS = Path(__file__).parents[1] / "fuzz" / "corpus"


@pytest.mark.parametrize("name", list(TARGETS))
def test_every_fuzz_seed_decodes(name):
    """The seeds are real chunks: the fuzzer starts from inputs that reach the decoders' end."""
    assert all(TARGETS[name](s) is True for s in seeds(name))


@pytest.mark.parametrize("path", sorted(CORPUS.glob("*/*")), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_corpus_input_and_past_finding_gives_a_result_or_a_clean_error(path):
    assert TARGETS[path.parent.name](path.read_bytes()) in (True, False)


def test_mutated_chunks_give_clean_errors():
    """A deterministic slice of what the fuzzer does, run on every platform: flip, cut and
    extend each seed of every target."""
    r = np.random.default_rng(11)
    for name, target in TARGETS.items():
        for seed in seeds(name):
            for _ in range(300):
                b = bytearray(seed)
                for _ in range(r.integers(1, 4)):
                    op = r.integers(0, 3)
                    if op == 0 and b:
                        b[r.integers(0, len(b))] = r.integers(0, 256)
                    elif op == 1 and b:
                        del b[r.integers(0, len(b)):]
                    else:
                        b += bytes(r.integers(0, 256, r.integers(1, 9), dtype=np.uint8))
                assert target(bytes(b)) in (True, False)


# -------------------------------------------------------------------------------- portable C


def test_the_build_picks_the_instruction_sets_this_cpu_has():
    """Whichever detection this build compiled (gcc builtins or the portable CPUID code),
    it agrees with what the kernel reports in /proc/cpuinfo."""
    from zdt.kernels import _baseline

    flags = set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    except OSError:
        pytest.skip("no /proc/cpuinfo on this platform")
    if not flags:
        pytest.skip("no x86 flags in /proc/cpuinfo")
    v3 = {"avx2", "fma", "bmi2", "f16c"} <= flags
    v4 = v3 and {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"} <= flags
    expected = ["baseline"] + (["avx2"] if v3 else []) + (["avx512"] if v4 else [])
    assert _baseline.supported_builds() == expected


@pytest.mark.parametrize("dtype, offsets, scales, xs", [
    (np.int64,
     [-(2 ** 63), -(2 ** 63) + 1, -(2 ** 32), -3, -1, 0, 1, 2, 3, 2 ** 31, 2 ** 32 + 1,
      3037000499, 3037000500, 2 ** 63 - 2, 2 ** 63 - 1],
     [1, -1, 2, -2, 3037000500, 2 ** 63 - 1, -(2 ** 63)],
     [-(2 ** 63), -1, 0, 1, 2 ** 63 - 1, 2 ** 32, -(2 ** 32)]),
    (np.uint64,
     [0, 1, 2 ** 32, 2 ** 64 - 2, 2 ** 64 - 1],
     [1, 2, 2 ** 32, 2 ** 32 + 1, 2 ** 64 - 1],
     [0, 1, 2 ** 32, 2 ** 64 - 1]),
])
def test_checked_64_bit_arithmetic_at_the_edges(dtype, offsets, scales, xs):
    """scale_offset on int64 / uint64 goes through zdt_{add,sub,mul}_{i64,u64}: their overflow
    answers at every edge, against Python's exact integers (both builds run this)."""
    info = np.iinfo(dtype)
    for offset, scale, x in itertools.product(offsets, scales, xs):
        exact = (x - offset) * scale
        ok = info.min <= x - offset <= info.max and info.min <= exact <= info.max
        try:
            got = zdt.scale_offset_encode(np.array([x], dtype=dtype), offset=offset, scale=scale)
        except ValueError:
            assert not ok, (x, offset, scale)
        else:
            assert ok and int(got[0]) == exact, (x, offset, scale)
