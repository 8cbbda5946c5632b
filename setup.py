"""Build the Cython extensions.

Everything else (metadata, entry points) lives in pyproject.toml.

The cast_value / scale_offset kernels (one source: zdt/_cast.pxi, zdt/_scale_offset.pxi) are
compiled once per instruction set and zdt/_kernels.py loads the best build the CPU runs:

  zdt._kernels_baseline  x86-64-v2 on x86-64 (the baseline NumPy itself requires: at the plain
                         x86-64 baseline every rint/floor/ceil/trunc is a libm call and the
                         rounding loops are ~6x slower); the compiler's default elsewhere
  zdt._kernels_avx2      x86-64-v3 (AVX2, FMA, BMI2), x86-64 only
  zdt._kernels_avx512    x86-64-v4 (AVX-512), x86-64 only

Never -march=native: the result must run on any machine NumPy runs on. ZDT_CYTHON_DEBUG=1
turns bounds checking and friends back on (CI can run a debug build).
"""

import os
import platform

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

DEBUG = os.environ.get("ZDT_CYTHON_DEBUG", "") == "1"
X86_64 = platform.machine().lower() in ("x86_64", "amd64")

# -g0: debug info is most of the binary.
COMMON_ARGS = ["-O1", "-g"] if DEBUG else ["-O3", "-g0"]
# -fno-trapping-math: we never unmask FP traps, and without it gcc will not vectorise
# floor/ceil/trunc (it keeps them scalar in case the precision exception traps); results of
# IEEE operations are unchanged. -ffp-contract=off: no fused multiply-add where the source
# rounds twice, so every build gives the same bits.
COMMON_ARGS += ["-fno-trapping-math", "-ffp-contract=off"]
BASELINE_ARGS = ["-march=x86-64-v2", "-mtune=generic"] if X86_64 else []
KERNEL_SOURCES = ["zdt/_cast.pxi", "zdt/_scale_offset.pxi", "zdt/_chain.pxi", "zdt/_exact.pxd", "zdt/_num.pxd", "zdt/_mini.pxd",
                  "zdt/_types.pxd"]
KERNEL_BUILDS = {"baseline": BASELINE_ARGS}
if X86_64:
    KERNEL_BUILDS["avx2"] = ["-march=x86-64-v3", "-mtune=generic"]
    KERNEL_BUILDS["avx512"] = ["-march=x86-64-v4", "-mtune=generic"]

extensions = [
    Extension(f"zdt._kernels_{name}", [f"zdt/_kernels_{name}.pyx"],
              extra_compile_args=COMMON_ARGS + args, depends=KERNEL_SOURCES)
    for name, args in KERNEL_BUILDS.items()
]
# The structs, enums and spec objects every kernel build shares (compiled once).
extensions.append(Extension("zdt._types", ["zdt/_types.pyx"], extra_compile_args=COMMON_ARGS + BASELINE_ARGS,
                            depends=["zdt/_types.pxd"]))
# The packbits bit stream (no instruction-set variants: it is bound by memory).
extensions.append(Extension("zdt._packbits", ["zdt/_packbits.pyx"], extra_compile_args=COMMON_ARGS + BASELINE_ARGS))
# Strings: the only module that needs NumPy's headers (its StringDType C API, NumPy >= 2).
extensions.append(Extension(
    "zdt._vlen", ["zdt/_vlen.pyx"], extra_compile_args=COMMON_ARGS + BASELINE_ARGS,
    include_dirs=[numpy.get_include()],
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_2_0_API_VERSION"),
                   ("NPY_TARGET_VERSION", "NPY_2_0_API_VERSION")],
))
# One copy of Cython's memoryview/utility code shared by every extension.
extensions.append(Extension("zdt._cyutility", ["zdt/_cyutility.c"], extra_compile_args=COMMON_ARGS))


class parallel_build_ext(build_ext):
    """Compile the extensions in parallel (one job per core) unless told otherwise: the three
    kernel builds are most of the build time."""

    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None:
            self.parallel = os.cpu_count() or 1


setup(
    cmdclass={"build_ext": parallel_build_ext},
    ext_modules=cythonize(
        extensions,
        shared_utility_qualified_name="zdt._cyutility",
        nthreads=os.cpu_count() or 1,
        compiler_directives={
            "language_level": 3,
            "boundscheck": DEBUG,
            "wraparound": DEBUG,
            "initializedcheck": DEBUG,
            "nonecheck": DEBUG,
            "freethreading_compatible": True,
            # `if float_t is double: return ...` leaves code Cython calls unreachable in each
            # specialisation; that is the point of fused types, not a mistake
            "warn.unreachable": False,
        },
    ),
)
