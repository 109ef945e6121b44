"""bench/daemon_memory.py, which prints perseusd's memory under clients that
never read their replies, runs against the built daemon (a small flood here:
the figures themselves are the benchmark's, not a test's)."""
import os
import re
import subprocess
import sys

import pytest

SOURCE = os.environ.get("PERSEUS_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


def test_the_benchmark_runs_and_prints_both_figures():
    perseusd = os.environ.get("PERSEUSD")
    if not perseusd:
        pytest.skip("PERSEUSD is not set (ctest sets it)")
    build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(perseusd))))  # <build>/src/runtime/daemon
    r = subprocess.run([sys.executable, os.path.join(SOURCE, "bench", "daemon_memory.py"), build, "--clients", "4",
                        "--requests", "2000", "--wait-s", "0.5"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert re.search(r"^perseusd VmRSS idle: \d+\.\d MB$", r.stdout, re.M), r.stdout
    assert re.search(r"^perseusd VmRSS with 4 clients sending 2000 requests each, reading nothing: \d+\.\d MB$",
                     r.stdout, re.M), r.stdout
