"""Build the Cython extensions.

Everything else (metadata, entry points) lives in pyproject.toml.

The cast_value / scale_offset kernels (one source: zdt/kernels/_cast.pxi, zdt/kernels/_scale_offset.pxi) are
compiled once per instruction set and zdt/kernels/__init__.py loads the best build the CPU runs:

  zdt.kernels._baseline  x86-64-v2 on x86-64 (the baseline NumPy itself requires: at the plain
                         x86-64 baseline every rint/floor/ceil/trunc is a libm call and the
                         rounding loops are ~6x slower); the compiler's default elsewhere
  zdt.kernels._avx2      x86-64-v3 (AVX2, FMA, BMI2), x86-64 only
  zdt.kernels._avx512    x86-64-v4 (AVX-512), x86-64 only

Never -march=native: the result must run on any machine NumPy runs on. Flags follow the
compiler (gcc/clang or MSVC) and the target architecture (x86-64: three builds, of which a
build from source for this machine compiles those its CPU runs; anything else: the baseline
build with the compiler's defaults). ZDT_CYTHON_DEBUG=1 turns bounds checking and friends
back on; ZDT_KERNEL_BUILDS=all or a list (baseline[,avx2][,avx512]) says which kernel builds;
ZDT_PORTABLE=1 forces the portable C of zdt/kernels/_portable.h (CI runs the tests against
both); ZDT_SANITIZE=address,undefined builds with clang's sanitizers.
"""

import glob
import hashlib
import json
import os
import platform
import sys

import Cython
import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

DEBUG = os.environ.get("ZDT_CYTHON_DEBUG", "") == "1"
# ZDT_PORTABLE=1: the plain-C / CPUID fallbacks of zdt/kernels/_portable.h instead of gcc's builtins
# (what MSVC compiles), so CI can run the tests against that code on this machine.
PORTABLE = os.environ.get("ZDT_PORTABLE", "") == "1"
# ZDT_SANITIZE=address,undefined (or fuzzer-no-link,address for kernel-level fuzzing): every
# extension compiled and linked with -fsanitize=<that>, with clang (CC=clang
# LDSHARED="clang -shared"); the sanitizer runtime is preloaded into Python at run time (see
# README, "Hardening"). UB is never recovered from: the first report stops the process.
SANITIZE = os.environ.get("ZDT_SANITIZE", "")


def target_is_x86_64() -> bool:
    """The architecture the extensions are built for: a cross build (macOS ARCHFLAGS,
    cibuildwheel's _PYTHON_HOST_PLATFORM) says so; else this machine."""
    archflags = os.environ.get("ARCHFLAGS", "")
    if archflags:
        return "x86_64" in archflags and "arm64" not in archflags
    host = os.environ.get("_PYTHON_HOST_PLATFORM", "")
    if host:
        return host.endswith(("x86_64", "amd64", "win-amd64"))
    return platform.machine().lower() in ("x86_64", "amd64")


X86_64 = target_is_x86_64()

# The instruction-set flags each x86-64 kernel build needs (Linux /proc/cpuinfo names).
LEVEL_FLAGS = {"avx2": {"avx2", "fma", "bmi1", "bmi2", "f16c", "movbe", "abm"},
               "avx512": {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}}


def native_levels() -> list[str] | None:
    """The kernel builds this machine's CPU runs, when the build is for this machine (not a
    cross build, not cibuildwheel's) and the CPU says (Linux); else None."""
    if os.environ.get("CIBUILDWHEEL") == "1" or os.environ.get("ARCHFLAGS") \
            or os.environ.get("_PYTHON_HOST_PLATFORM"):
        return None
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            flags = next(set(line.split(":", 1)[1].split()) for line in f if line.startswith("flags"))
    except (OSError, StopIteration, IndexError):
        return None
    return ["baseline"] + [level for level, need in LEVEL_FLAGS.items() if need <= flags]


# Kernel builds: one source, compiled per instruction set; other architectures get the baseline
# build only, with the compiler's default flags. On x86-64 a build from source for this machine
# compiles the builds its CPU runs (the others could never load here; each is ~1.5 CPU-minutes
# of compiling); a wheel for others (cibuildwheel, a cross build, or a CPU that does not say)
# holds all three. ZDT_KERNEL_BUILDS=all, or a list such as baseline,avx2, decides instead.
KERNEL_LEVELS = ["baseline", "avx2", "avx512"] if X86_64 else ["baseline"]
if X86_64 and not os.environ.get("ZDT_KERNEL_BUILDS"):
    KERNEL_LEVELS = native_levels() or KERNEL_LEVELS
if os.environ.get("ZDT_KERNEL_BUILDS", "all") != "all":
    _asked = [b.strip() for b in os.environ["ZDT_KERNEL_BUILDS"].split(",") if b.strip()]
    if "baseline" not in _asked or not set(_asked) <= set(KERNEL_LEVELS):
        raise SystemExit(f"ZDT_KERNEL_BUILDS={os.environ['ZDT_KERNEL_BUILDS']}: a subset of "
                         f"{','.join(KERNEL_LEVELS)} that holds baseline")
    KERNEL_LEVELS = [b for b in KERNEL_LEVELS if b in _asked]


def compile_args(compiler_type: str, level: str) -> list[str]:
    """Flags for one extension. level: a kernel build ("baseline", "avx2", "avx512"), "module"
    (the other extensions: baseline instruction set) or "plain" (no instruction-set flags)."""
    if compiler_type == "msvc":
        args = ["/Od", "/Zi"] if DEBUG else ["/O2"]
        if level == "c99":
            args += ["/std:c11"]        # (MSVC has no C99 switch; C11 is its nearest)
        # /fp:precise: IEEE semantics, and no contraction into FMA (MSVC contracts only with
        # /fp:contract or /fp:fast), so every build gives the same bits as gcc's
        args += ["/fp:precise"]
        if X86_64:
            args += {"avx2": ["/arch:AVX2"], "avx512": ["/arch:AVX512"]}.get(level, [])
        return args
    # gcc / clang. -g0: debug info is most of the binary. A sanitizer build (clang) keeps line
    # tables only (its reports' stack traces name file and line) and is not optimised: -O0
    # compiles the kernels in a fifth of -O1's time (the cast kernels 12 s against 58), its
    # tests (Python-bound) take 10% longer and the fuzzing runs 75-100% of -O1's inputs a second,
    # and ASan and UBSan check every access and operation as written.
    args = ["-O0", "-gline-tables-only"] if SANITIZE else ["-O1", "-g"] if DEBUG else ["-O3", "-g0"]
    if SANITIZE:
        args += sanitize_args()
    # -fno-trapping-math: we never unmask FP traps, and without it gcc will not vectorise
    # floor/ceil/trunc (it keeps them scalar in case the precision exception traps); results
    # of IEEE operations are unchanged. -ffp-contract=off: no fused multiply-add where the
    # source rounds twice, so every build gives the same bits.
    if level == "c99":      # (libzdtpredict: the C standard its CMake build uses)
        # (-fno-fast-math first: it resets -ftrapping-math, and after -fno-trapping-math it
        # kept gcc from vectorising libzdtpredict's whole-array loops)
        args += ["-std=c99", "-fno-fast-math"]
    args += ["-fno-trapping-math", "-ffp-contract=off"]
    if X86_64:
        args += {"baseline": ["-march=x86-64-v2", "-mtune=generic"],
                 "module": ["-march=x86-64-v2", "-mtune=generic"],
                 "c99": ["-march=x86-64-v2", "-mtune=generic"],
                 "avx2": ["-march=x86-64-v3", "-mtune=generic"],
                 "avx512": ["-march=x86-64-v4", "-mtune=generic"]}.get(level, [])
    return args


def sanitize_args() -> list[str]:
    """-fsanitize flags for ZDT_SANITIZE (compile and link)."""
    args = [f"-fsanitize={SANITIZE}", "-fno-omit-frame-pointer"]
    if "undefined" in SANITIZE.split(","):
        # float-divide-by-zero is not in "undefined": IEEE division by zero is defined (and
        # the kernels rely on it); every other check stops at its first report
        args += ["-fno-sanitize-recover=undefined"]
    return args


KERNEL_SOURCES = [f"zdt/kernels/{name}" for name in (
    "_cast.pxi", "_scale_offset.pxi", "_bitround.pxi", "_exact.pxd", "_num.pxd", "_mini.pxd", "_types.pxd",
    "_steps.pxd", "_portable.pxd", "_portable.h", "_stream.h")]


# zdt.predict's C library (libzdtpredict/: its own CMake build for C users), compiled into
# zdt.kernels._predict_core without libzstd: the extension passes numcodecs' zstd as its
# provider, so no zstd headers or library are needed to build zdt
LIBZDTPREDICT_SOURCES = sorted(glob.glob("libzdtpredict/src/*.c"))
LIBZDTPREDICT_DEPENDS = sorted(glob.glob("libzdtpredict/src/*.h") + glob.glob("libzdtpredict/include/*.h"))


# The modules built against NumPy's C API: built with NumPy 2's headers, they load on NumPy >= 2.
NUMPY_MACROS = [("NPY_NO_DEPRECATED_API", "NPY_2_0_API_VERSION"),
                ("NPY_TARGET_VERSION", "NPY_2_0_API_VERSION")]


def extension(name: str, sources: list[str], level: str, **kwargs) -> Extension:
    """An Extension that carries its compile_args level (the flags themselves are chosen in
    build_ext, once the compiler is known)."""
    ext = Extension(name, sources, **kwargs)
    ext.zdt_level = level
    return ext


extensions = [
    extension(f"zdt.kernels._{level}", [f"zdt/kernels/_{level}.pyx"], level, depends=KERNEL_SOURCES)
    for level in KERNEL_LEVELS
] + [
    # The structs, enums and spec objects every kernel build shares (compiled once).
    extension("zdt.kernels._types", ["zdt/kernels/_types.pyx"], "module", depends=["zdt/kernels/_types.pxd"]),
    # Running any list of per-block steps over n-d arrays (compiled once; the steps carry the
    # functions of the build that made them). It reads the arrays through NumPy's C API (its
    # own cost per call counts at small chunks).
    extension("zdt.kernels._steps", ["zdt/kernels/_steps.pyx"], "module",
              depends=["zdt/kernels/_steps.pxd", "zdt/kernels/_num.pxd",
                       "zdt/kernels/_portable.pxd", "zdt/kernels/_portable.h"],
              include_dirs=[numpy.get_include()], define_macros=NUMPY_MACROS),
    # The packbits bit stream (no instruction-set variants: it is bound by memory).
    extension("zdt.kernels._packbits", ["zdt/kernels/_packbits.pyx"], "module"),
    # zdt.predict: the C library's sources and the Cython binding over its header (one build:
    # sequential, bound by its dependency chain, not by vector width; C99 and -ffp-contract=off
    # as the library's CMake build, so its bits are the same everywhere)
    extension("zdt.kernels._predict_core", ["zdt/kernels/_predict_core.pyx", *LIBZDTPREDICT_SOURCES],
              "c99", depends=LIBZDTPREDICT_DEPENDS,
              include_dirs=["libzdtpredict/include", "libzdtpredict/src"]),
    # Strings (NumPy's StringDType C API, NumPy >= 2).
    extension("zdt.kernels._vlen", ["zdt/kernels/_vlen.pyx"], "module",
              include_dirs=[numpy.get_include()], define_macros=NUMPY_MACROS),
    # One copy of Cython's memoryview/utility code shared by every extension.
    extension("zdt.kernels._cyutility", ["zdt/kernels/_cyutility.c"], "plain"),
]


CYTHON_DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "nonecheck": DEBUG,
    "freethreading_compatible": True,
    # `if float_t is double: return ...` leaves code Cython calls unreachable in each
    # specialisation; that is the point of fused types, not a mistake
    "warn.unreachable": False,
}


CYTHON_KEYS_FILE = "zdt/kernels/.cython-keys.json"   # build output, like the C it describes


def read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError:
        return None


def write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def cython_keys(extensions: list[Extension]) -> dict[str, str]:
    """What each extension's generated C depends on: its .pyx and every Cython include and C
    header of zdt's kernels (by content), Cython's version (its bundled .pxd files and the
    shared utility code), NumPy's for the modules that cimport it (_steps, _vlen) and the directives
    (ZDT_CYTHON_DEBUG turns the checks on)."""
    includes = hashlib.sha256()
    for path in sorted(glob.glob("zdt/kernels/*.pxd") + glob.glob("zdt/kernels/*.pxi")
                       + glob.glob("zdt/kernels/*.h")):
        with open(path, "rb") as f:
            includes.update(path.encode() + b"\0" + f.read() + b"\0")
    keys = {}
    for ext in extensions:
        h = hashlib.sha256()
        uses_numpy = numpy.get_include() in ext.include_dirs
        h.update(repr((Cython.__version__, numpy.__version__ if uses_numpy else None,
                       sorted(CYTHON_DIRECTIVES.items()))).encode())
        pyx = [src for src in ext.sources if src.endswith(".pyx")]
        if pyx:         # (the shared utility module has no sources of ours)
            for path in pyx:
                with open(path, "rb") as f:
                    h.update(path.encode() + b"\0" + f.read() + b"\0")
            h.update(includes.digest())
        keys[ext.name] = h.hexdigest()
    return keys


def generated_c(ext: Extension) -> list[str]:
    return [os.path.splitext(src)[0] + ".c" if src.endswith(".pyx") else src for src in ext.sources]


def flags_key() -> str:
    """What the compiled objects depend on beyond their sources: the flag switches, the
    compiler and the Python they are built for."""
    return repr(sorted({"DEBUG": DEBUG, "PORTABLE": PORTABLE, "SANITIZE": SANITIZE, "X86_64": X86_64,
                        "CC": os.environ.get("CC", ""), "CFLAGS": os.environ.get("CFLAGS", ""),
                        "LDSHARED": os.environ.get("LDSHARED", ""), "python": sys.version}.items()))


class zdt_build_ext(build_ext):
    """Flags by compiler (gcc/clang or MSVC) and target; the extensions compile in parallel
    (one job per core) unless told otherwise: the three kernel builds are most of the build."""

    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None:
            self.parallel = os.cpu_count() or 1

    def run(self):
        # Cythonize when building, not at import: sdist and pip's metadata steps skip it.
        # Whether the C in the tree is current is decided by content, not timestamps: pip's
        # isolated build environment installs Cython afresh for every build, so its bundled
        # .pxd files are always newer than C generated by the last build and Cython's own
        # check would regenerate (and so recompile) everything on every install.
        try:
            known = json.loads(read(CYTHON_KEYS_FILE) or "{}")
        except ValueError:
            known = {}
        keys = cython_keys(self.extensions)
        stale = [ext for ext in self.extensions
                 if known.get(ext.name) != keys[ext.name] or not all(map(os.path.exists, generated_c(ext)))]
        if stale:
            cythonize(
                stale,
                shared_utility_qualified_name="zdt.kernels._cyutility",
                nthreads=os.cpu_count() or 1,
                compiler_directives=CYTHON_DIRECTIVES,
                force=True,
            )
            known = {name: key for name, key in known.items() if name in keys}
            known.update({ext.name: keys[ext.name] for ext in stale})
            write(CYTHON_KEYS_FILE, json.dumps(known, indent=1, sort_keys=True))
        # setuptools' own (finalized) Extension objects compile the C cythonize wrote beside each .pyx
        for ext in self.extensions:
            ext.sources = generated_c(ext)
        print(f"zdt: cythonized {', '.join(e.name for e in stale) or 'nothing'}; current C kept for "
              f"{', '.join(e.name for e in self.extensions if e not in stale) or 'nothing'}")
        # setuptools skips an extension whose shared object is newer than its sources: right
        # for unchanged C, wrong when the flags changed (ZDT_PORTABLE, ZDT_SANITIZE, another
        # compiler), so a build with other flags than the last one in this build tree
        # recompiles everything
        flags_file = os.path.join(self.build_temp, "zdt-flags.key")
        flags = flags_key()
        if read(flags_file) != flags:
            self.force = True
        super().run()
        write(flags_file, flags)
        build_hdf5_plugin(self)

    def build_extensions(self):
        kind = self.compiler.compiler_type
        if SANITIZE:
            cc = " ".join(getattr(self.compiler, "compiler_so", None) or [kind])
            if "clang" not in cc:
                raise SystemExit(f"ZDT_SANITIZE={SANITIZE} needs clang (CC=clang LDSHARED='clang "
                                 f"-shared'); the compiler here is {cc.split()[0]}")
        for ext in self.extensions:
            ext.extra_compile_args = compile_args(kind, ext.zdt_level)
            if SANITIZE:
                ext.extra_link_args = [*ext.extra_link_args, *sanitize_args()]
            if PORTABLE:
                ext.define_macros = [*ext.define_macros, ("ZDT_PORTABLE", "1")]
        super().build_extensions()


# The HDF5 filter plugin (zdt.hdf5; docs/codecs/predict.md, "HDF5 face"): libzdtpredict's
# sources and libzdtpredict/hdf5/H5Z_zdt_predict.c in one shared object, zdt/hdf5_plugin/
# libh5zdtpredict.so, that links libzstd (its zstd provider: HDF5 calls it outside Python, so
# not numcodecs') and no libhdf5. Without libzstd's headers or library it is left out with a
# warning (zdt.hdf5 then says what to install); ZDT_HDF5_PLUGIN=0 leaves it out.
HDF5_PLUGIN_SOURCES = LIBZDTPREDICT_SOURCES + ["libzdtpredict/hdf5/H5Z_zdt_predict.c"]
HDF5_PLUGIN_MAP = "libzdtpredict/hdf5/H5Z_zdt_predict.map"


def build_hdf5_plugin(cmd: build_ext) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from setuptools.errors import CompileError, LinkError

    if os.environ.get("ZDT_HDF5_PLUGIN", "1") == "0":
        return
    if sys.platform == "win32":
        print("zdt: warning: the HDF5 filter plugin is not built on Windows yet (zdt.hdf5 will "
              "say so)", file=sys.stderr)
        return
    out_dir = os.path.join("zdt" if cmd.inplace else os.path.join(cmd.build_lib, "zdt"), "hdf5_plugin")
    target = os.path.join(out_dir, "libh5zdtpredict.so")
    inputs = HDF5_PLUGIN_SOURCES + LIBZDTPREDICT_DEPENDS + [HDF5_PLUGIN_MAP, "setup.py",
                                                            "libzdtpredict/hdf5/H5Z_zdt_predict.h"]
    if not cmd.force and os.path.exists(target) and \
            os.path.getmtime(target) >= max(os.path.getmtime(p) for p in inputs):
        return
    compiler = cmd.compiler
    # no sanitizers (other programs load it) and no instruction-set flags beyond the baseline
    # (compile_args' "c99" flags, at -O3); -fno-wrapv undoes Python's CFLAGS' -fwrapv, as the
    # CMake build compiles the library (the extension keeps it: Cython's code does NULL + 0,
    # which UBSan reports without -fwrapv)
    args = ["-O3", "-g0", "-std=c99", "-fno-fast-math", "-fno-trapping-math", "-ffp-contract=off",
            "-fno-wrapv", "-fvisibility=hidden", "-fPIC"]
    if X86_64:
        args += ["-march=x86-64-v2", "-mtune=generic"]
    temp = os.path.join(cmd.build_temp, "hdf5_plugin")
    macros = [("ZDT_PREDICT_BUILDING", None), ("ZDT_PREDICT_LIBZSTD", None)]
    includes = ["libzdtpredict/include", "libzdtpredict/src", "libzdtpredict/hdf5"]

    def one(src: str) -> list[str]:
        return compiler.compile([src], output_dir=temp, macros=macros, include_dirs=includes,
                                extra_postargs=args)

    try:
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            objects = [obj for objs in pool.map(one, HDF5_PLUGIN_SOURCES) for obj in objs]
        os.makedirs(out_dir, exist_ok=True)
        link = [] if sys.platform == "darwin" else [f"-Wl,--version-script={HDF5_PLUGIN_MAP}",
                                                    "-Wl,--no-undefined"]
        compiler.link_shared_object(objects, target, libraries=["zstd", "m", "dl", "pthread"],
                                    extra_postargs=link)
    except (CompileError, LinkError) as e:
        print(f"zdt: warning: the HDF5 filter plugin (zdt.hdf5) is left out: {e}. It needs "
              "libzstd's headers and library (Debian/Ubuntu: apt-get install libzstd-dev; "
              "conda: zstd)", file=sys.stderr)
        return
    print(f"zdt: built the HDF5 filter plugin {target}")


setup(cmdclass={"build_ext": zdt_build_ext}, ext_modules=extensions)
