"""pip install . builds the Python package olla_onnx (python/olla_onnx).

Its extension module, olla_onnx._olla, is built by CMake (target olla_python,
python/CMakeLists.txt) together with the library it links in, so that the
compile flags live in one place, CMakeLists.txt. Building needs what
scripts/setup.sh installs, plus Debian's python3-dev, python3-setuptools and
python3-wheel; nothing is downloaded:

    pip install --no-build-isolation --no-index .
"""
import glob
import os
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


def version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        return re.search(r"project\(olla-onnx VERSION ([0-9.]+)", f.read()).group(1)


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class BuildWithCMake(build_ext):
    """Configures and builds the CMake target olla_python, then copies the
    module where setuptools expects it."""

    def build_extension(self, ext):
        build = os.path.join(os.path.abspath(self.build_temp), "cmake")
        jobs = str(max(1, len(os.sched_getaffinity(0))))
        subprocess.check_call(["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DOLLA_PYTHON=ON",
                               "-DOLLA_BUILD_TESTS=OFF", "-DPython3_EXECUTABLE=" + sys.executable])
        subprocess.check_call(["cmake", "--build", build, "--target", "olla_python", "-j", jobs])
        built = glob.glob(os.path.join(build, "python", "olla_onnx", "_olla*.so"))
        if len(built) != 1:
            sys.exit("setup.py: CMake built %d modules in %s/python/olla_onnx, wanted 1" % (len(built), build))
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built[0], target)


with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
    README = f.read()

setup(
    name="olla-onnx",
    version=version(),
    description="Reorder an ONNX model's nodes to minimise peak memory and place every tensor in one arena",
    long_description=README,
    long_description_content_type="text/markdown",
    package_dir={"": "python"},
    packages=["olla_onnx"],
    ext_modules=[CMakeExtension("olla_onnx._olla")],
    cmdclass={"build_ext": BuildWithCMake},
    python_requires=">=3.10",
    install_requires=["onnx"],
    zip_safe=False,
)
