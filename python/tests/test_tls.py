"""perseus serve over HTTPS (--tls-cert/--tls-key) and the clients that verify it:
perseus status --ca-cert, perseus.register_job/job_status(ca_cert=), RankClient(ca_cert=),
$PERSEUS_CA_CERT; and every way the set-up can be wrong, each with a clear error."""
import os
import shutil
import ssl
import subprocess
import time
import urllib.request

import pytest

import perseus

TOKEN = "tls-test-token"


def _cli():
    cli = os.environ.get("PERSEUS_CLI")
    if not cli or not os.path.exists(cli):
        pytest.skip("PERSEUS_CLI (the perseus binary) is not set")
    return cli


def _make_cert(folder, name, hosts):
    """A self-signed certificate and its key for `hosts` (DNS names and IPs)."""
    if shutil.which("openssl") is None:
        if os.environ.get("CI"):
            pytest.fail("openssl is missing (scripts/install_deps.sh installs it)")
        pytest.skip("openssl not found")
    cert, key = os.path.join(folder, name + ".pem"), os.path.join(folder, name + ".key")
    san = ",".join(("IP:" if h[0].isdigit() else "DNS:") + h for h in hosts)
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-keyout", key,
                    "-out", cert, "-subj", "/CN=" + hosts[0], "-addext", "subjectAltName=" + san],
                   check=True, capture_output=True)
    return cert, key


@pytest.fixture
def tls_server(tmp_path):
    """(https URL, CA file, folder) of a server with TLS and a token."""
    cli = _cli()
    cert, key = _make_cert(str(tmp_path), "server", ["127.0.0.1", "localhost"])
    port_file = tmp_path / "port"
    env = dict(os.environ, PERSEUS_TOKEN=TOKEN)
    proc = subprocess.Popen([cli, "serve", "--db", str(tmp_path / "p.db"), "--port", "0", "--port-file",
                             str(port_file), "--log-file", str(tmp_path / "log"), "--tls-cert", cert, "--tls-key", key],
                            env=env)
    try:
        context = ssl.create_default_context(cafile=cert)
        deadline = time.time() + 10
        while True:
            assert proc.poll() is None, f"perseus serve exited with {proc.returncode}"
            try:
                port = int(port_file.read_text().strip())
                urllib.request.urlopen(f"https://127.0.0.1:{port}/healthz", timeout=1, context=context).read()
                break
            except (OSError, ValueError):
                assert time.time() < deadline, "the TLS server did not start"
                time.sleep(0.05)
        yield f"https://127.0.0.1:{port}", cert, tmp_path
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _status(url, *extra, env=None):
    return subprocess.run([_cli(), "status", "--server", url, *extra], capture_output=True, text=True,
                          env=env if env is not None else {k: v for k, v in os.environ.items()
                                                           if k != "PERSEUS_CA_CERT"})


def test_status_verifies_the_server_certificate(tls_server):
    url, cert, _ = tls_server
    ok = _status(url, "--ca-cert", cert)
    assert ok.returncode == 0, ok.stderr
    untrusted = _status(url)
    assert untrusted.returncode == 1
    assert "the server's certificate was not accepted" in untrusted.stderr
    assert "self-signed certificate" in untrusted.stderr
    assert "--ca-cert" in untrusted.stderr  # says how to fix it
    via_env = _status(url, env=dict(os.environ, PERSEUS_CA_CERT=cert))
    assert via_env.returncode == 0, via_env.stderr


def test_certificate_for_another_host_is_refused(tls_server, tmp_path):
    url, _, _ = tls_server
    other, _ = _make_cert(str(tmp_path), "other", ["perseus.example.org"])
    # Trusting a different certificate does not make this one valid.
    r = _status(url, "--ca-cert", other)
    assert r.returncode == 1 and "the server's certificate was not accepted" in r.stderr


def test_plain_http_to_the_tls_port_fails(tls_server):
    url, _, _ = tls_server
    r = _status(url.replace("https://", "http://"))
    assert r.returncode == 1 and r.stderr.startswith("perseus: error: GET http://")


def test_python_clients_over_tls(tls_server):
    url, cert, _ = tls_server
    with pytest.raises(ConnectionError, match="the server's certificate was not accepted"):
        perseus.register_job(url, {"id": "nossl", "dp": 1, "pp": 1, "tp": 1, "microbatches": 2}, token=TOKEN)
    reply = perseus.register_job(url, {"id": "tls", "dp": 1, "pp": 1, "tp": 1, "microbatches": 2}, token=TOKEN,
                                 ca_cert=cert)
    assert reply["created"] is True
    assert perseus.job_status(url, "tls", ca_cert=cert)["phase"] == "registering"
    client = perseus.RankClient(url, "tls", rank=0, gpu="simulated:A100", token=TOKEN, ca_cert=cert,
                                poll_interval_ms=20, restore_on_signal=False)
    try:
        deadline = time.time() + 20
        while not client.stats()["registered"]:
            assert time.time() < deadline, client.stats()
            time.sleep(0.02)
        assert perseus.job_status(url, "tls", ca_cert=cert)["ranks_registered"] == 1
    finally:
        client.close()


def _serve_fails(*args):
    r = subprocess.run([_cli(), "serve", "--port", "0", *args], capture_output=True, text=True, timeout=20)
    assert r.returncode == 1, r
    return r.stderr


def test_bad_tls_setups_are_refused_at_start(tmp_path):
    cert, key = _make_cert(str(tmp_path), "a", ["127.0.0.1"])
    other_cert, other_key = _make_cert(str(tmp_path), "b", ["127.0.0.1"])
    db = ["--db", str(tmp_path / "p.db")]
    assert "--tls-cert needs --tls-key" in _serve_fails(*db, "--tls-cert", cert)
    assert "--tls-key needs --tls-cert" in _serve_fails(*db, "--tls-key", key)
    missing = str(tmp_path / "missing.pem")
    assert f"--tls-cert {missing}" in _serve_fails(*db, "--tls-cert", missing, "--tls-key", key)
    mismatched = _serve_fails(*db, "--tls-cert", cert, "--tls-key", other_key)
    assert f"TLS: cannot use certificate {cert} with key {other_key}" in mismatched
    not_pem = tmp_path / "not.pem"
    not_pem.write_text("hello\n")
    assert "TLS: cannot use certificate" in _serve_fails(*db, "--tls-cert", str(not_pem), "--tls-key", key)
    del other_cert
