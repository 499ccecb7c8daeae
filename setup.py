"""The compiled parts of phasekit.

- The recorder's sampling loop (phasekit.record._sampler), a C extension. It is optional:
  without a C compiler the install goes on and ``phasekit record`` samples with its
  pure-Python loop (slower, see docs/recording.md).
- The periodicity kernels (phasekit.periodicity._kernels: Phase-TA's detector, alignment,
  spanning tree) and the DTW/DBA kernels (phasekit.distance._dtw, OpenMP over pairs), C
  extensions, so that ``phasekit analyze`` imports no numba, which with its cached
  kernels cost 0.3-0.5 s of every command. They are required: installing phasekit from
  source needs a C compiler (gcc or clang).
- The Paraver reader's parser and column kernels (phasekit.io._paraver), a C extension for
  the same reason: ``phasekit structure`` imports no numba. Required as well.
- numba's machine code for the other analysis kernels (phases, energy, schedule):
  a wheel build runs
  :mod:`phasekit.warmup` on the built package, whose kernels are then cached in its
  ``__pycache__`` folders and shipped in the wheel, so the first command after
  ``pip install .`` loads them instead of compiling (about a minute). Also optional: when
  the warm-up cannot run (no numba in the build environment, an error), the build goes on
  and the kernels compile at first use. Editable installs skip it.

The build's intermediate files go to a temporary folder, removed when the build ends, not to
``build/`` in the checkout (7.9 MB that ``pip install .`` used to leave behind).

Everything else is in pyproject.toml.
"""

import atexit
import os
import shutil
import subprocess
import sys
import tempfile

from setuptools import Extension, setup
from setuptools.command.build_py import build_py


class BuildWithKernels(build_py):
    """build_py, then the numba warm-up on the built package (not for editable installs)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False) or os.environ.get("PHASEKIT_NO_WARMUP"):
            return
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
        env["PYTHONPATH"] = os.pathsep.join(
            [os.path.abspath(self.build_lib), *filter(None, [env.get("PYTHONPATH")])])
        print("compiling phasekit's numba kernels into the package (phasekit.warmup; "
              "PHASEKIT_NO_WARMUP=1 skips it)", flush=True)
        try:
            done = subprocess.run([sys.executable, "-m", "phasekit.warmup"], env=env,
                                  cwd=self.build_lib, check=False, timeout=1800)
        except (OSError, subprocess.TimeoutExpired) as exc:
            print(f"phasekit warm-up not run ({exc}); the kernels compile at first use")
            return
        if done.returncode:
            print("phasekit warm-up incomplete; the kernels it missed compile at first use")


KERNEL_FLAGS = ["-O3", "-std=c11", "-fopenmp"]
BUILD_BASE = tempfile.mkdtemp(prefix="phasekit-build-")
atexit.register(shutil.rmtree, BUILD_BASE, ignore_errors=True)

setup(ext_modules=[Extension("phasekit.record._sampler", ["src/phasekit/record/_sampler.c"],
                             extra_compile_args=["-O2", "-std=c11", "-D_GNU_SOURCE"],
                             libraries=["pthread", "m"], optional=True),
                   Extension("phasekit.distance._dtw", ["src/phasekit/distance/_dtw.c"],
                             depends=["src/phasekit/_buffers.h"],
                             extra_compile_args=KERNEL_FLAGS, extra_link_args=["-fopenmp"],
                             libraries=["m"]),
                   Extension("phasekit.io._paraver", ["src/phasekit/io/_paraver.c"],
                             depends=["src/phasekit/_buffers.h"],
                             extra_compile_args=["-O3", "-std=c11"]),
                   Extension("phasekit.periodicity._kernels",
                             ["src/phasekit/periodicity/_kernels.c"],
                             depends=["src/phasekit/_buffers.h"],
                             extra_compile_args=["-O3", "-std=c11"], libraries=["m"])],
      cmdclass={"build_py": BuildWithKernels},
      options={"build": {"build_base": BUILD_BASE}, "egg_info": {"egg_base": BUILD_BASE}})
