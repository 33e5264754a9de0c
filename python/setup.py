# SPDX-License-Identifier: MIT
# The wheel carries fxlens._core, a compiled extension built by the project's CMake build (see
# scripts/package.sh): the distribution says so, so that the wheel is tagged for this Python and
# platform instead of "py3-none-any".
from setuptools import setup
from setuptools.dist import Distribution


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True


setup(distclass=BinaryDistribution)
