"""The compiled part of phasekit: the recorder's sampling loop (phasekit.record._sampler).

Everything else is in pyproject.toml. The extension is optional: without a C compiler the
install goes on and ``phasekit record`` samples with its pure-Python loop (slower, see
docs/recording.md).
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("phasekit.record._sampler", ["src/phasekit/record/_sampler.c"],
                             extra_compile_args=["-O2", "-std=c11", "-D_GNU_SOURCE"],
                             libraries=["pthread", "m"], optional=True)])
