"""Build the Cython kernels.

Everything else (metadata, entry points) lives in pyproject.toml. Kernels are compiled for the
instruction-set baseline NumPy itself requires (x86-64-v2 on x86-64): at the plain x86-64
baseline every rint/floor/ceil/trunc becomes a libm call and the rounding loops get ~6x slower.
Never -march=native: the result must run on any machine NumPy runs on.

ZDT_CYTHON_DEBUG=1 turns bounds checking and friends back on (CI can run a debug build).
"""

import os
import platform

from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("ZDT_CYTHON_DEBUG", "") == "1"


def _isa_flags() -> list[str]:
    machine = platform.machine().lower()
    if machine in ("x86_64", "amd64"):
        return ["-march=x86-64-v2", "-mtune=generic"]
    return []


# -fno-trapping-math: we never unmask FP traps, and without it gcc will not vectorise
# floor/ceil/trunc (it keeps them scalar in case the precision exception traps). Results of
# IEEE operations are unchanged.
# -g0: the kernels' debug info is most of the binary (3.5 MB -> ~1 MB)
compile_args = ["-O3", "-g0", "-fno-trapping-math", *(_isa_flags())]
if DEBUG:
    compile_args = ["-O1", "-g", "-fno-trapping-math", *(_isa_flags())]

KERNELS = ["_cast"]

extensions = [
    Extension(f"zdt.{name}", [f"zdt/{name}.pyx"], extra_compile_args=compile_args)
    for name in KERNELS
]
# One copy of Cython's memoryview/utility code shared by every kernel module.
extensions.append(Extension("zdt._cyutility", ["zdt/_cyutility.c"], extra_compile_args=compile_args))

setup(
    ext_modules=cythonize(
        extensions,
        shared_utility_qualified_name="zdt._cyutility",
        nthreads=2,
        compiler_directives={
            "language_level": 3,
            "boundscheck": DEBUG,
            "wraparound": DEBUG,
            "initializedcheck": DEBUG,
            "nonecheck": DEBUG,
            "freethreading_compatible": True,
        },
    ),
)
