# SPDX-License-Identifier: MIT
def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (ctest label gpu)")
    config.addinivalue_line("markers", "slow: compiles with Inductor or traces whole models; runs with the "
                                       "model zoo (ctest python_slow, label models), not in the README's test command")
