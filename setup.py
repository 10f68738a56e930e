"""setuptools driving the project's CMake for `pip install .`: configures a Release build of the
library, the renderer and the module sieve._core for this interpreter (CUDA when nvcc is found;
CMAKE_ARGS adds options, e.g. CMAKE_ARGS="-DSIEVE_CUDA=OFF"), builds that one target and puts the
module and libsieve_compaction next to the package's Python code (the module finds it by $ORIGIN)."""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


def version():
    with open(os.path.join(ROOT, "compaction", "include", "sieve", "version.hpp"), encoding="utf-8") as f:
        parts = dict(re.findall(r"#define SIEVE_VERSION_(MAJOR|MINOR|PATCH) (\d+)", f.read()))
    return f"{parts['MAJOR']}.{parts['MINOR']}.{parts['PATCH']}"


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = os.environ.get("SIEVE_PYTHON_BUILD_DIR", os.path.join(ROOT, "build-python"))
        args = ["-DCMAKE_BUILD_TYPE=Release", "-DSIEVE_TESTS=OFF", "-DSIEVE_APP=OFF", "-DSIEVE_MPI=OFF",
                f"-DPython3_EXECUTABLE={sys.executable}"] + shlex.split(os.environ.get("CMAKE_ARGS", ""))
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        subprocess.run(["cmake", "-S", ROOT, "-B", build, *generator, *args], check=True)
        subprocess.run(["cmake", "--build", build, "--target", "sieve_python", "-j", str(os.cpu_count() or 2)], check=True)
        dest = os.path.dirname(os.path.abspath(self.get_ext_fullpath(ext.name)))
        os.makedirs(dest, exist_ok=True)
        built = glob.glob(os.path.join(build, "python", "sieve", "_core*.so"))
        # The library under its soname (the link libsieve_compaction.so.X.Y), the one name the module asks for.
        libs = [p for p in glob.glob(os.path.join(build, "compaction", "libsieve_compaction.so.*")) if os.path.islink(p)]
        if not built or not libs:
            sys.exit("setup.py: the CMake build made no sieve/_core module (is pybind11-dev installed?)")
        shutil.copy2(built[0], self.get_ext_fullpath(ext.name))
        for lib in libs:
            shutil.copy2(lib, dest, follow_symlinks=True)


setup(version=version(), ext_modules=[Extension("sieve._core", sources=[])], cmdclass={"build_ext": CMakeBuild})
