"""`zdt convert` at size: one process against a dask cluster, a local directory against S3.

    python bench/bench_stores.py [--n 200000000] [--chunk 1000000] [--abs-error 0.01]
                                 [--workers 2] [--skip-s3]

A float64 array of n values (a smooth field with noise, 0.001-unit readings; 200M = 1.6 GB)
in chunks of `chunk` with zstd, in a local directory, converted with `--abs-error` by the
`zdt` command in a fresh process each time:

  local -> local, one process
  local -> local, --scheduler local:W   (W worker processes on this machine)
  local -> s3://, one process            (an S3 API server, moto, on 127.0.0.1)
  local -> s3://, --scheduler local:W

Reported: wall seconds, throughput (input bytes / s), and the peak resident memory of the
command's process and of each worker process (sampled every 0.1 s), next to the input size.
Every run must write the same bytes (asserted).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np


def make_source(path: Path, n: int, chunk: int) -> None:
    import zarr

    a = zarr.create_array(str(path), shape=(n,), chunks=(chunk,), dtype="float64",
                          compressors=[{"name": "zstd", "configuration": {"level": 3}}])
    rng = np.random.default_rng(0)
    step = 10 * chunk
    for start in range(0, n, step):
        m = min(step, n - start)
        t = np.arange(start, start + m) * 1e-6
        x = 15 + 10 * np.sin(t) + rng.normal(0, 0.5, m)
        a[start:start + m] = np.round(x, 3)


class PeakMemory:
    """Peak RSS of a process and of every process below it, sampled until stopped."""

    def __init__(self, pid: int) -> None:
        import psutil

        self.root = psutil.Process(pid)
        self.peaks: dict[int, tuple[str, int]] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        import psutil

        while not self.stop.is_set():
            try:
                procs = [self.root] + self.root.children(recursive=True)
            except psutil.Error:
                return
            for p in procs:
                try:
                    rss = p.memory_info().rss
                    name = " ".join(p.cmdline()[1:3])
                except psutil.Error:
                    continue
                if rss > self.peaks.get(p.pid, ("", 0))[1]:
                    self.peaks[p.pid] = (name, rss)
            time.sleep(0.1)

    def finish(self) -> tuple[int, list[int]]:
        """(the command's peak, each worker's peak)."""
        self.stop.set()
        self.thread.join()
        main = self.peaks.get(self.root.pid, ("", 0))[1]
        workers = sorted(rss for pid, (name, rss) in self.peaks.items()
                         if pid != self.root.pid and rss > 50 << 20)
        return main, workers


def run(argv: list[str], env: dict, cwd: Path) -> tuple[float, int, list[int]]:
    t0 = time.perf_counter()
    # (cwd: not a source checkout, which `python -m zdt` would import instead of the install)
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    mem = PeakMemory(proc.pid)
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    main, workers = mem.finish()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {err.strip()}")
    return wall, main, workers


def digest_dir(path: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(path.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(path)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def digest_s3(fs, prefix: str) -> str:
    h = hashlib.sha256()
    for key in sorted(fs.find(prefix)):
        h.update(key[len(prefix) + 1:].encode())
        h.update(fs.cat_file(key))
    return h.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=200_000_000)
    parser.add_argument("--chunk", type=int, default=1_000_000)
    parser.add_argument("--abs-error", default="0.01")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--skip-s3", action="store_true")
    args = parser.parse_args()
    zdt = [sys.executable, "-m", "zdt"]
    root = Path(tempfile.mkdtemp(prefix="zdt-bench-stores-"))
    server = None
    try:
        src = root / "src.zarr"
        t0 = time.perf_counter()
        make_source(src, args.n, args.chunk)
        size = args.n * 8
        print(f"source: {args.n:,} float64 ({size / 1e9:.2f} GB) in chunks of {args.chunk:,}, "
              f"made in {time.perf_counter() - t0:.0f} s")
        env = dict(os.environ)
        targets = [("local directory", str(root / "out-{k}.zarr"))]
        if not args.skip_s3:
            import s3fs
            from moto.server import ThreadedMotoServer

            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            import logging

            logging.getLogger("werkzeug").setLevel(logging.ERROR)     # one line per request
            server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
            server.start()
            endpoint = f"http://127.0.0.1:{port}"
            env.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench",
                       AWS_DEFAULT_REGION="us-east-1", AWS_ENDPOINT_URL=endpoint)
            fs = s3fs.S3FileSystem(key="bench", secret="bench", client_kwargs={"endpoint_url": endpoint})
            fs.mkdir("bench")
            targets.append(("S3 (moto on 127.0.0.1)", "s3://bench/out-{k}.zarr"))
        print(f"\n{'run':50s} {'s':>7s} {'MB/s':>7s} {'peak MB (command)':>18s} {'peak MB (workers)':>18s}")
        digests = {}
        for label, pattern in targets:
            for k, extra in (("one", []), ("dask", ["--scheduler", f"local:{args.workers}"])):
                dst = pattern.format(k=k)
                argv = zdt + ["convert", str(src), dst, "--abs-error", args.abs_error, "--quiet", *extra]
                wall, main_rss, workers = run(argv, env, root)
                name = f"{label}, {'one process' if k == 'one' else f'--scheduler local:{args.workers}'}"
                wk = ", ".join(f"{w >> 20}" for w in workers) or "-"
                print(f"{name:50s} {wall:7.1f} {size / wall / 1e6:7.0f} {main_rss >> 20:18d} {wk:>18s}",
                      flush=True)
                digests[name] = digest_s3(fs, dst[len("s3://"):]) if dst.startswith("s3://") \
                    else digest_dir(Path(dst))
        assert len(set(digests.values())) == 1, json.dumps(digests, indent=1)
        print("\nevery run wrote the same bytes")
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
