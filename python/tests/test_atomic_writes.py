# SPDX-License-Identifier: MIT
"""Outputs are written atomically: a kill at any moment of `convert -o` or `optimize -o` leaves the
previous file whole (never truncated), a write that cannot complete leaves the target as it was, and
no temporary file is left behind by a write that finishes or fails."""
import glob
import os
import signal
import subprocess
import time

import pytest

from clitools import CLI, ROOT

EX = os.path.join(ROOT, "resources", "examples")
pytestmark = pytest.mark.skipif(not os.path.exists(CLI), reason="fxlens-cli not built")


def _info_ok(path):
    return subprocess.run([CLI, "info", path], capture_output=True, text=True).returncode == 0


def test_kill_mid_write_keeps_a_whole_file(tmp_path):
    target = str(tmp_path / "out.json")
    small = os.path.join(EX, "tangle4_fx.json")
    subprocess.run([CLI, "convert", small, "--to", "json", "-o", target], check=True)
    previous = open(target, "rb").read()
    big = os.path.join(EX, "tangle800_torch.json.gz")  # ~17 MB of JSON to write
    outcomes = set()
    for delay in (0.05, 0.1, 0.2, 0.3, 0.45, 0.6):
        p = subprocess.Popen([CLI, "convert", big, "--to", "json", "-o", target])
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        p.wait()
        data = open(target, "rb").read()
        assert data == previous or _info_ok(target), f"truncated target after a kill at {delay} s ({len(data)} bytes)"
        outcomes.add("old" if data == previous else "new")
        previous = data
    for stray in glob.glob(str(tmp_path / ".out.json.fxlens-tmp-*")):
        os.unlink(stray)  # a killed writer may leave its temporary file; never the target
    assert outcomes  # at least one kill happened


def test_failed_write_leaves_target_and_no_temp(tmp_path):
    target = tmp_path / "taken"
    target.mkdir()
    (target / "keep.txt").write_text("x")
    r = subprocess.run([CLI, "convert", os.path.join(EX, "tangle4_fx.json"), "--to", "text", "-o", str(target)],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "cannot write" in r.stderr and str(target) in r.stderr, r.stderr
    assert (target / "keep.txt").read_text() == "x"
    assert not glob.glob(str(tmp_path / ".taken.fxlens-tmp-*"))
    r = subprocess.run([CLI, "convert", os.path.join(EX, "tangle4_fx.json"), "--to", "text", "-o", str(tmp_path / "no" / "dir.txt")],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "cannot write" in r.stderr, r.stderr


def test_finished_writes_replace_and_keep_mode(tmp_path):
    target = tmp_path / "g.json.gz"
    target.write_bytes(b"old")
    os.chmod(target, 0o640)
    r = subprocess.run([CLI, "optimize", os.path.join(EX, "tangle50_torch.json"), "-o", str(target)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert open(target, "rb").read(2) == b"\x1f\x8b"  # gzip, as the name says
    assert _info_ok(str(target))
    assert os.stat(target).st_mode & 0o777 == 0o640
    assert not glob.glob(str(tmp_path / ".g.json.gz.fxlens-tmp-*"))
