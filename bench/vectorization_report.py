"""Which fast-loop specialisations did gcc vectorise?

Compiles the generated zdt/kernels/_baseline.c (or _avx2 / _avx512 with --build; run
`python setup.py build_ext --inplace` first) with the same flags as setup.py plus
-fopt-info-vec, and prints, per kernel specialisation, whether its main loop was vectorised. A
development aid: a loop that stops vectorising is a regression the benchmark would show as a
slowdown.

    python bench/vectorization_report.py [--missed] [--build baseline|avx2|avx512] [filter]
"""

from __future__ import annotations

import re
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    argv = sys.argv[1:]
    march = {"baseline": "x86-64-v2", "avx2": "x86-64-v3", "avx512": "x86-64-v4"}
    build = "baseline"
    if "--build" in argv:
        i = argv.index("--build")
        build = argv[i + 1]
        del argv[i:i + 2]
    if build not in march:
        sys.exit(f"--build must be one of {', '.join(march)}, not {build!r}")
    args = [a for a in argv if not a.startswith("--")]
    show_missed = "--missed" in argv
    pattern = args[0] if args else ""
    src = ROOT / "zdt" / "kernels" / f"_{build}.c"
    with tempfile.TemporaryDirectory() as tmp:
        info = Path(tmp) / "vec.txt"
        subprocess.run(
            ["gcc", "-O3", "-fno-trapping-math", f"-march={march[build]}", "-ffp-contract=off", "-fPIC", f"-I{sysconfig.get_paths()['include']}",
             "-c", str(src), "-o", str(Path(tmp) / "c.o"), f"-fopt-info-vec-optimized={info}"],
            check=True,
        )
        pattern_vec = re.escape(src.name) + r":(\d+):\d+: optimized: loop vectorized"
        vectorized = {int(m.group(1)) for m in re.finditer(pattern_vec, info.read_text())}
    lines = src.read_text().splitlines()
    starts = []
    for i, line in enumerate(lines, 1):
        m = re.match(r"static \w+ ((?:__pyx_fuse_[\d_]+)?__pyx_f_3zdt_7kernels_\d+_[a-z0-9]+_(f2i|i2i|i2f|f2f|f32_to_mini_even|f32_to_mini_mode|f32_upper_half_even|f64_to_f32_odd|narrow_block|widen_int|widen_subint|subint_to_float|map_apply|map_unmark|map_mark|mark_block|so_[a-z0-9_]+))\((.*)\) \{", line)
        if m:
            starts.append((i, m.group(1), m.group(3)))
    for (start, name, sig), nxt in zip(starts, starts[1:] + [(len(lines), "", "")]):
        hits = [v for v in vectorized if start <= v < nxt[0]]
        desc = re.sub(r"__pyx_t_3zdt_\d+kernels_\d+_types_|__pyx_v_|CYTHON_UNUSED|const|\*", "", sig)
        desc = " ".join(p.split()[0] for p in desc.split(",") if p.strip())
        text = f"{'VEC ' if hits else '--- '} {name.split(f'_{build}_', 1)[1]:9s} {desc}"
        if pattern in text and (hits or show_missed):
            print(text)


if __name__ == "__main__":
    main()
