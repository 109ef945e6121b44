"""Builds the C++ parts of the Python package with CMake; pyproject.toml holds
the metadata. Two artefacts come from one CMake build:

- perseus/_perseus*.so, the extension module (rank client and optimizer);
- the `perseus` command (installed into the environment's bin/ as a script).

Environment:
  PERSEUS_CMAKE_BUILD_DIR  reuse this configured CMake build folder (for example
                           build/ci) instead of configuring a fresh one; it must
                           have been configured for this Python (checked).
  CMAKE_BUILD_PARALLEL_LEVEL  the usual CMake knob for build parallelism.
"""
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from distutils.command.build_scripts import build_scripts  # setuptools' copy (its distutils shim)

ROOT = Path(__file__).resolve().parent
CLI_STAGING = Path("build") / "perseus-cli"


def project_version():
    """The version of project() in CMakeLists.txt, the one place it is written."""
    text = (ROOT / "CMakeLists.txt").read_text()
    match = re.search(r"^project\(perseus VERSION ([0-9]+\.[0-9]+\.[0-9]+)", text, re.M)
    if match is None:
        sys.exit("setup.py: CMakeLists.txt: no 'project(perseus VERSION X.Y.Z' line")
    return match.group(1)


def run(cmd):
    print("setup.py: " + " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True)


def cached_python(build_dir):
    """The Python_EXECUTABLE a configured build folder uses, or None."""
    cache = build_dir / "CMakeCache.txt"
    for line in cache.read_text().splitlines():
        if line.startswith(("Python_EXECUTABLE:", "_Python_EXECUTABLE:")):
            return line.split("=", 1)[1]
    return None


class CMakeBuild(build_ext):
    """Configures (unless PERSEUS_CMAKE_BUILD_DIR is given) and builds _perseus and perseus."""

    def run(self):
        build_dir = self.cmake_build_dir()
        run(["cmake", "--build", build_dir, "--target", "_perseus", "perseus"])
        module = self.find_module(build_dir)
        target = Path(self.get_ext_fullpath("perseus._perseus"))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(module, target)
        CLI_STAGING.mkdir(parents=True, exist_ok=True)
        shutil.copy2(build_dir / "src" / "cli" / "perseus", CLI_STAGING / "perseus")

    def cmake_build_dir(self):
        given = os.environ.get("PERSEUS_CMAKE_BUILD_DIR")
        if given:
            build_dir = Path(given).resolve()
            if not (build_dir / "CMakeCache.txt").is_file():
                sys.exit(f"setup.py: PERSEUS_CMAKE_BUILD_DIR={given}: not a configured CMake build folder")
            self.check_same_python(build_dir)
            return build_dir
        build_dir = Path(self.build_temp).resolve() / "cmake"
        run(["cmake", "-S", ROOT, "-B", build_dir, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
             "-DPERSEUS_BUILD_TESTS=OFF", "-DPERSEUS_BUILD_BENCH=OFF", f"-DPython_EXECUTABLE={sys.executable}"])
        return build_dir

    @staticmethod
    def check_same_python(build_dir):
        """A module built for another interpreter would fail at import; say so now."""
        cached = cached_python(build_dir)
        probe = [cached, "-c", "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))"]
        theirs = subprocess.run(probe, capture_output=True, text=True).stdout.strip() if cached else ""
        ours = sysconfig.get_config_var("EXT_SUFFIX")
        if theirs != ours:
            sys.exit(f"setup.py: {build_dir} was configured for {cached or 'no Python'} "
                     f"(extension suffix '{theirs}'), this is {sys.executable} ('{ours}'): "
                     "unset PERSEUS_CMAKE_BUILD_DIR or configure that folder with -DPython_EXECUTABLE")

    @staticmethod
    def find_module(build_dir):
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        module = build_dir / "python" / "perseus" / ("_perseus" + suffix)
        if not module.is_file():
            sys.exit(f"setup.py: the build did not produce {module}")
        return module


class CopyBinaryScripts(build_scripts):
    """Copies the `perseus` binary as it is (build_scripts would read it as a Python script)."""

    def copy_scripts(self):
        self.mkpath(self.build_dir)
        outfiles = []
        for script in self.scripts:
            out = os.path.join(self.build_dir, os.path.basename(script))
            self.copy_file(script, out)
            outfiles.append(out)
        return outfiles, outfiles


setup(
    version=project_version(),
    ext_modules=[Extension("perseus._perseus", sources=[])],
    cmdclass={"build_ext": CMakeBuild, "build_scripts": CopyBinaryScripts},
    scripts=[str(CLI_STAGING / "perseus")],
)
