"""Build the Cython kernels.

Everything else (metadata, entry points) lives in pyproject.toml. Kernels are compiled for the
instruction-set baseline NumPy itself requires (x86-64-v2 on x86-64): at the plain x86-64
baseline every rint/floor/ceil/trunc becomes a libm call and the rounding loops get ~6x slower.
Like NumPy, the kernels are also built for x86-64-v3 and -v4 and chosen at run time. Never
-march=native: the result must run on any machine NumPy runs on.

ZDT_CYTHON_DEBUG=1 turns bounds checking and friends back on (CI can run a debug build).
"""

import os
import platform

from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("ZDT_CYTHON_DEBUG", "") == "1"
X86_64 = platform.machine().lower() in ("x86_64", "amd64")

# -g0: debug info is most of the binary.
COMMON_ARGS = ["-O1", "-g"] if DEBUG else ["-O3", "-g0"]
# -fno-trapping-math: we never unmask FP traps, and without it gcc will not vectorise
# floor/ceil/trunc (it keeps them scalar in case the precision exception traps); results of
# IEEE operations are unchanged. -ffp-contract=off: no fused multiply-add where the source
# rounds twice, so every ISA level gives the same bits.
COMMON_ARGS += ["-fno-trapping-math", "-ffp-contract=off"]
KERNEL_DEPENDS = ["zdt/_cast.pxi", "zdt/_scale_offset.pxi", "zdt/_exact.pxd", "zdt/_types.pxd"]


def kernel(name: str, march: str) -> Extension:
    isa = [f"-march={march}", "-mtune=generic"] if X86_64 else []
    return Extension(f"zdt.{name}", [f"zdt/{name}.pyx"], extra_compile_args=COMMON_ARGS + isa,
                     depends=KERNEL_DEPENDS)


# The kernels, one source (zdt/_cast.pxi, zdt/_scale_offset.pxi) at three x86-64 levels;
# zdt/_kernels.py loads the best one the CPU supports. Elsewhere only the baseline is built.
extensions = [kernel("_kernels_v2", "x86-64-v2")]
if X86_64:
    extensions += [kernel("_kernels_v3", "x86-64-v3"), kernel("_kernels_v4", "x86-64-v4")]
# Strings: the only module that needs NumPy's headers (its StringDType C API, NumPy >= 2).
import numpy  # noqa: E402

extensions.append(Extension(
    "zdt._vlen", ["zdt/_vlen.pyx"], extra_compile_args=COMMON_ARGS + (["-march=x86-64-v2"] if X86_64 else []),
    include_dirs=[numpy.get_include()],
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_2_0_API_VERSION"),
                   ("NPY_TARGET_VERSION", "NPY_2_0_API_VERSION")],
))
# One copy of Cython's memoryview/utility code shared by every kernel module.
extensions.append(Extension("zdt._cyutility", ["zdt/_cyutility.c"], extra_compile_args=COMMON_ARGS))

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
