"""Which fast-loop specialisations did gcc vectorise?

Compiles the generated zdt/_kernels_v2.c (run `python setup.py build_ext --inplace` first) with the
same flags as setup.py plus -fopt-info-vec, and prints, per kernel specialisation, whether its
main loop was vectorised. A development aid: a loop that stops vectorising is a regression the
benchmark would show as a slowdown.

    python bench/vectorization_report.py [--missed] [filter]
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
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    show_missed = "--missed" in sys.argv
    pattern = args[0] if args else ""
    src = ROOT / "zdt" / "_kernels_v2.c"   # the baseline (x86-64-v2) build
    with tempfile.TemporaryDirectory() as tmp:
        info = Path(tmp) / "vec.txt"
        subprocess.run(
            ["gcc", "-O3", "-fno-trapping-math", "-march=x86-64-v2", "-fPIC", f"-I{sysconfig.get_paths()['include']}",
             "-c", str(src), "-o", str(Path(tmp) / "c.o"), f"-fopt-info-vec-optimized={info}"],
            check=True,
        )
        vectorized = {int(m.group(1)) for m in re.finditer(r"_cast\.c:(\d+):\d+: optimized: loop vectorized", info.read_text())}
    lines = src.read_text().splitlines()
    starts = []
    for i, line in enumerate(lines, 1):
        m = re.match(r"static \w+ (__pyx_fuse_[\d_]+__pyx_f_3zdt_11_kernels_v2_(f2i|i2i|i2f|f2f|f2h|widen_half|widen_int|map_apply|map_unmark|map_mark|mark_block|so_[a-z0-9_]+))\((.*)\) \{", line)
        if m:
            starts.append((i, m.group(1), m.group(3)))
    for (start, name, sig), nxt in zip(starts, starts[1:] + [(len(lines), "", "")]):
        hits = [v for v in vectorized if start <= v < nxt[0]]
        desc = re.sub(r"__pyx_t_3zdt_6_types_|__pyx_v_|const|\*", "", sig)
        desc = " ".join(p.split()[0] for p in desc.split(",") if p.strip())
        text = f"{'VEC ' if hits else '--- '} {name.split('_kernels_v2_')[1]:9s} {desc}"
        if pattern in text and (show_missed or True):
            if hits or show_missed or not pattern:
                print(text)


if __name__ == "__main__":
    main()
