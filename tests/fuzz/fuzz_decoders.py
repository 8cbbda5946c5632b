"""Coverage-guided fuzzing of zdt's decoders and kernels with atheris.

    python tests/fuzz/fuzz_decoders.py TARGET [CORPUS_DIR] [libFuzzer flags]

TARGET is a name in targets.TARGETS: the decoders fed arbitrary chunk bytes, and two
differential targets (cast_value, scale_offset: random configurations and elements, every
kernel build against the exact reference in tests/reference.py). atheris instruments zdt's
Python code. The Cython kernels are instrumented only when built for it, with clang:

    CC=clang LDSHARED="clang -shared" ZDT_SANITIZE=fuzzer-no-link,address,undefined \
        python setup.py build_ext --inplace
    LD_PRELOAD=$(python -c "import atheris; print(atheris.path())")/asan_with_fuzzer.so \
        ASAN_OPTIONS=detect_leaks=0 PYTHONPATH=$PWD python tests/fuzz/fuzz_decoders.py vlen_utf8 corpus/

(.ci/run does this): libFuzzer then sees the edges inside _vlen, _packbits, the cast and
scale_offset loops and _steps, and AddressSanitizer / UBSan stop at the first bad read or
undefined operation. Without that build, coverage guidance stops at the kernels' door (about
17 edges for a vlen target against about 450-600 with it) while every input still runs through
them. A finding is written to crash-* (see -artifact_prefix) and ends the run with a non-zero
status; add it to tests/fuzz/corpus/<target>/ so tests/kernels/test_hardening.py keeps it fixed.
"""

import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).parent))

import zdt.codecs.cast  # noqa: E402,F401
import zdt.codecs.packbits  # noqa: E402,F401
import zdt.codecs.scale_offset  # noqa: E402,F401
import zdt.codecs.vlen  # noqa: E402,F401
from targets import TARGETS  # noqa: E402


def _instrument(func) -> int:
    """Python functions only (Cython's compiled ones have no bytecode to instrument)."""
    code = getattr(func, "__code__", None)
    if code is None or code.co_filename.endswith((".pyx", ".pxi")) or "(tree fragment)" in code.co_filename:
        return 0
    try:
        atheris.instrument_func(func)
    except RuntimeError:
        return 0
    return 1


def instrument_zdt() -> int:
    """Coverage instrumentation for every Python function of zdt and of the targets."""
    count = 0
    for name, module in list(sys.modules.items()):
        if name == "targets" or name == "zdt" or name.startswith("zdt."):
            for obj in list(vars(module).values()):
                if getattr(obj, "__module__", None) != name:
                    continue
                if isinstance(obj, type):
                    for attr, member in list(vars(obj).items()):
                        count += _instrument(getattr(member, "__func__", member))
                else:
                    count += _instrument(obj)
    return count


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in TARGETS:
        sys.exit(f"usage: {sys.argv[0]} TARGET [CORPUS_DIR] [libFuzzer flags]; "
                 f"targets: {', '.join(TARGETS)}")
    target = TARGETS[sys.argv[1]]
    target(b"")  # import what the target imports lazily, then instrument it all
    print(f"instrumented {instrument_zdt()} functions of zdt", file=sys.stderr)
    atheris.Setup([sys.argv[0], *sys.argv[2:]], target)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
