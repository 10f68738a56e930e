"""setuptools driving the project's CMake for `pip install .` and `pip wheel .` (pyproject.toml).

Out of tree: the CMake build (the library, the renderer and the module sieve._core for this
interpreter, Release, CUDA when nvcc is found) and setuptools' own build folders go into a temporary
folder, removed afterwards, so nothing is written into the checkout. SIEVE_PYTHON_BUILD_DIR names a
folder to keep the CMake build in instead (a rebuild is then incremental); CMAKE_ARGS adds CMake
options (e.g. CMAKE_ARGS="-DSIEVE_CUDA=OFF"); CMAKE_BUILD_PARALLEL_LEVEL sets the compile jobs (default:
every core); CMAKE_ARGS="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache" caches the compiles between builds.

The wheel holds the package (python/sieve), the module, libsieve_compaction (found by $ORIGIN) and the
image module libsieve_image_oiio.so (opened beside the module when a TGA, TIFF, EXR or .hdr is read); it
links the Debian 12 libraries it was built against (oneTBB, ...) from the system, so it installs on
machines that have them (docs/python.md)."""
import atexit
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
# setuptools' build/, bdist and egg-info folders: outside the checkout, removed at exit.
SCRATCH = tempfile.mkdtemp(prefix="sieve-setup-")
atexit.register(shutil.rmtree, SCRATCH, ignore_errors=True)


def version():
    with open(os.path.join(ROOT, "compaction", "include", "sieve", "version.hpp"), encoding="utf-8") as f:
        parts = dict(re.findall(r"#define SIEVE_VERSION_(MAJOR|MINOR|PATCH) (\d+)", f.read()))
    return f"{parts['MAJOR']}.{parts['MINOR']}.{parts['PATCH']}"


def cmake_args():
    extra = shlex.split(os.environ.get("CMAKE_ARGS", ""))
    args = ["-DCMAKE_BUILD_TYPE=Release", "-DSIEVE_TESTS=OFF", "-DSIEVE_APP=OFF", "-DSIEVE_MPI=OFF",
            f"-DPython3_EXECUTABLE={sys.executable}"]
    if shutil.which("ninja"):
        args += ["-G", "Ninja"]
    return args + extra


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = os.environ.get("SIEVE_PYTHON_BUILD_DIR") or os.path.join(SCRATCH, "cmake")
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 2)
        subprocess.run(["cmake", "-S", ROOT, "-B", build, *cmake_args()], check=True)
        subprocess.run(["cmake", "--build", build, "--target", "sieve_python", "-j", jobs], check=True)
        dest = os.path.dirname(os.path.abspath(self.get_ext_fullpath(ext.name)))
        os.makedirs(dest, exist_ok=True)
        built = glob.glob(os.path.join(build, "python", "sieve", "_core*.so"))
        # The library under its soname (the link libsieve_compaction.so.X.Y), the one name the module asks for.
        libs = [p for p in glob.glob(os.path.join(build, "compaction", "libsieve_compaction.so.*")) if os.path.islink(p)]
        if not built or not libs:
            sys.exit("setup.py: the CMake build made no sieve/_core module (are python3-dev, pybind11-dev and "
                     "libdlpack-dev installed? scripts/setup installs them)")
        shutil.copy2(built[0], self.get_ext_fullpath(ext.name))
        # The image module (TGA, TIFF, EXR, .hdr through OpenImageIO), loaded from beside the module on first use.
        modules = glob.glob(os.path.join(build, "renderer", "libsieve_image_oiio.so"))
        for lib in libs + modules:
            shutil.copy2(lib, dest, follow_symlinks=True)


setup(
    version=version(),
    ext_modules=[Extension("sieve._core", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": os.path.join(SCRATCH, "build")},
             "egg_info": {"egg_base": SCRATCH}},
)
