"""Shared fixtures: a `perseus serve` child process on a free loopback port."""
import os
import subprocess
import tempfile
import time
import urllib.request

import pytest


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
def server():
    """Yields the URL of a fresh server; stops it afterwards."""
    cli = os.environ.get("PERSEUS_CLI")
    if not cli or not os.path.exists(cli):
        pytest.skip("PERSEUS_CLI (the perseus binary) is not set")
    with tempfile.TemporaryDirectory() as tmp:
        port_file = os.path.join(tmp, "port")
        proc = subprocess.Popen([cli, "serve", "--db", os.path.join(tmp, "p.db"), "--port", "0",
                                 "--port-file", port_file, "--log-file", os.path.join(tmp, "log")])
        try:
            yield f"http://127.0.0.1:{_wait_port(port_file, proc)}"
        finally:
            proc.terminate()
            proc.wait(timeout=10)
