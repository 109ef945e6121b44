"""Shared fixtures: a `perseus serve` child process on a free loopback port.

Files a test writes go in its `tmp_path` (or `tmp_path_factory`), all under
one directory per run that is removed when the run ends; scripts/test.sh
fails when the suite leaves anything in $TMPDIR."""
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    """Puts tmp_path under a fresh directory removed at the end (pytest would keep
    the last three runs' in $TMPDIR/pytest-of-$USER); an explicit --basetemp stays."""
    if config.option.basetemp is None:
        base = tempfile.mkdtemp(prefix="perseus_pytest_")
        config.option.basetemp = base
        config.add_cleanup(lambda: shutil.rmtree(base, ignore_errors=True))


def _wait_port(port_file, proc, timeout_s=10.0):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"perseus serve exited with {proc.returncode}")
        try:
            with open(port_file) as f:
                port = int(f.read().strip())
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1).read()
            return port
        except (OSError, ValueError):
            time.sleep(0.02)
    raise RuntimeError("perseus serve did not start")


@pytest.fixture
def server(tmp_path_factory):
    """Yields the URL of a fresh server (its files in a directory of its own); stops it afterwards."""
    cli = os.environ.get("PERSEUS_CLI")
    if not cli or not os.path.exists(cli):
        pytest.skip("PERSEUS_CLI (the perseus binary) is not set")
    tmp = tmp_path_factory.mktemp("server")
    port_file = tmp / "port"
    # Jobs may name files (carbon traces) in the tests' own temporary folders.
    proc = subprocess.Popen([cli, "serve", "--db", str(tmp / "p.db"), "--port", "0",
                             "--port-file", str(port_file), "--log-file", str(tmp / "log"),
                             "--job-files", str(tmp_path_factory.getbasetemp())])
    try:
        yield f"http://127.0.0.1:{_wait_port(port_file, proc)}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
