# SPDX-License-Identifier: MIT
def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (ctest label gpu)")
