"""/metrics as Prometheus users see it: Debian's prometheus scrapes a real `perseus serve`
during a job of simulated ranks, and the test queries the result through Prometheus'
HTTP API (the energy counter's rate, the job_id label, no exported_job); `promtool
check metrics` passes on the exposition; every query of the shipped Grafana dashboard
(deploy/grafana/perseus-dashboard.json) names metrics the server exports and is
accepted by Prometheus."""
import json
import os
import re
import shutil
import socket
import subprocess
import threading
import time
import urllib.parse
import urllib.request

import pytest

import perseus

SOURCE = os.environ.get("PERSEUS_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
DASHBOARD = os.path.join(SOURCE, "deploy", "grafana", "perseus-dashboard.json")
JOB = "prom-job"
ORDERS = [["forward", "forward", "backward", "backward"], ["forward", "backward"] * 2]


def _tool(name):
    path = shutil.which(name)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is missing (scripts/install_deps.sh installs Debian's prometheus)")
        pytest.skip(f"{name} not found (Debian package prometheus)")
    return path


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url):
    with urllib.request.urlopen(url, timeout=5) as r:
        return r.read().decode()


def _query(prom, expr):
    reply = json.loads(_get(f"{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr})))
    assert reply["status"] == "success", reply
    return reply["data"]["result"]


class _Ranks:
    """Two simulated ranks (one pipeline of two stages) stepping in a thread at the simulated
    GPUs' pace: like a training loop that synchronises with the GPU at the step's end, each
    step waits out its modelled work. (Without the wait the loop ran 100,000 steps a second;
    each client's queue then dropped a different subset of iterations, so the server rarely
    saw an iteration from both ranks, and the measured-power gauge sometimes took minutes.)"""

    def __init__(self, server):
        self.clients = [perseus.RankClient(server, JOB, rank=s, pp_rank=s, gpu_index=s, gpu="simulated:A100",
                                           poll_interval_ms=20, restore_on_signal=False) for s in range(2)]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop.is_set():
            for stage, client in enumerate(self.clients):
                client.on_step_begin()
                busy_s = 0.0
                for ins in ORDERS[stage]:
                    client.on_instruction_begin(ins)
                    busy_s += client.simulate(ins, 0.002 * (2 if ins == "backward" else 1) * (1 + 0.3 * stage))
                    client.on_instruction_end(ins)
                time.sleep(busy_s)
                client.on_step_end()

    def close(self):
        self.stop.set()
        self.thread.join(timeout=10)
        for c in self.clients:
            c.close()


@pytest.fixture
def running_job(server):
    perseus.register_job(server, {"id": JOB, "dp": 1, "pp": 2, "tp": 1, "microbatches": 2,
                                  "profiling": {"iterations_per_clock": 1, "clock_stride": 10},
                                  "carbon": {"source": "fixed", "value_g_per_kwh": 300, "window_s": 3600}})
    ranks = _Ranks(server)
    try:
        deadline = time.time() + 120
        while perseus.job_status(server, JOB)["phase"] != "running":
            assert time.time() < deadline, perseus.job_status(server, JOB)
            time.sleep(0.2)
        deadline = time.time() + 30
        while perseus.job_status(server, JOB)["pipelines"][0]["totals"]["measured_iterations"] < 3:
            assert time.time() < deadline, perseus.job_status(server, JOB)
            time.sleep(0.2)
        yield server
    finally:
        ranks.close()


@pytest.fixture
def prometheus(running_job, tmp_path):
    binary = _tool("prometheus")
    target = urllib.parse.urlparse(running_job).netloc
    config = tmp_path / "prometheus.yml"
    config.write_text("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                      "scrape_configs:\n  - job_name: perseus\n    static_configs:\n"
                      f"      - targets: ['{target}']\n")
    port = _free_port()
    proc = subprocess.Popen([binary, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
                             f"--web.listen-address=127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=open(tmp_path / "prometheus.log", "w"))
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 30
        while True:
            try:
                _get(f"{url}/-/ready")
                break
            except OSError:
                assert proc.poll() is None and time.time() < deadline, (tmp_path / "prometheus.log").read_text()
                time.sleep(0.2)
        yield url, running_job
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def _wait_for(prom, expr, ok, timeout_s=60):
    deadline = time.time() + timeout_s
    while True:
        result = _query(prom, expr)
        if ok(result):
            return result
        assert time.time() < deadline, f"{expr}: {result}"
        time.sleep(1)


def test_prometheus_scrapes_counters_with_job_id(prometheus):
    prom, server = prometheus
    rate = _wait_for(prom, f'rate(perseus_pipeline_energy_joules_total{{job_id="{JOB}"}}[1m])',
                     lambda r: r and float(r[0]["value"][1]) > 0)
    labels = rate[0]["metric"]
    assert labels["job_id"] == JOB and labels["job"] == "perseus" and "exported_job" not in labels, labels
    _wait_for(prom, f'increase(perseus_pipeline_iterations_total{{job_id="{JOB}"}}[1m])',
              lambda r: r and float(r[0]["value"][1]) > 0)
    saved = _wait_for(prom, f'1 - sum(rate(perseus_pipeline_energy_joules_total{{job_id="{JOB}"}}[1m])) / '
                            f'sum(rate(perseus_pipeline_all_max_energy_joules_total{{job_id="{JOB}"}}[1m]))',
                      lambda r: bool(r))
    # A number, not NaN (this test's ranks take turns on one thread, so their energy includes the
    # other's turn and the figure itself means nothing here; the lifecycle test checks savings).
    assert float(saved[0]["value"][1]) == float(saved[0]["value"][1]), saved
    assert not _query(prom, '{exported_job!=""}'), "a label of ours collided with Prometheus' job"
    clocks = _query(prom, "perseus_frontier_all_max_seconds")
    assert clocks and float(clocks[0]["value"][1]) > 0


def test_promtool_accepts_the_exposition(running_job):
    promtool = _tool("promtool")
    text = _get(f"{running_job}/metrics")
    assert "# TYPE perseus_pipeline_energy_joules_total counter" in text
    assert "_mhz" not in text and "{job=" not in text
    r = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True)
    assert r.returncode == 0 and not r.stdout.strip() and not r.stderr.strip(), r.stdout + r.stderr


def _dashboard_queries():
    with open(DASHBOARD) as f:
        dash = json.load(f)
    exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
    for v in dash["templating"]["list"]:
        if v["type"] == "query":
            exprs.append(v["definition"])
    return dash, exprs


def test_grafana_dashboard_queries_what_the_server_exports(prometheus):
    prom, server = prometheus
    dash, exprs = _dashboard_queries()
    exported = set(re.findall(r"^# TYPE (\w+) ", _get(f"{server}/metrics"), re.M))
    # A declared straggler, so the straggler series exist too (a plan change resets the
    # measured means until new iterations arrive: hence the names from both scrapes).
    perseus.declare_straggler(server, JOB, pipeline=0, slowdown=1.2)
    # And a power cap, so the power panel's series exist, and a server cap above what the job
    # draws (its share is then its uncapped power), so the server cap's series exist.
    perseus.set_power_cap(server, JOB, average_w=5000.0)
    perseus.set_server_power_cap(server, average_w=1e6)
    titles = " ".join(p["title"] for p in dash["panels"]).lower()
    for subject in ("energy saved", "plan", "straggler", "carbon", "power cap", "warnings"):
        assert subject in titles, subject
    # Gauges of recent iterations are absent between a plan change and the next complete iteration.
    wanted = {name for expr in exprs for name in re.findall(r"\bperseus_\w+", expr)}
    # Measured power needs complete iterations under the capped plan, with the energy counter
    # stepping through them (under a second here; the limit allows for a loaded CI machine).
    deadline = time.time() + 60
    while not wanted <= exported and time.time() < deadline:
        exported |= set(re.findall(r"^# TYPE (\w+) ", _get(f"{server}/metrics"), re.M))
        time.sleep(0.2)
    assert wanted <= exported, f"the dashboard queries {wanted - exported}, which /metrics does not export"
    for expr in exprs:
        if expr.startswith("label_values("):
            metric, label = re.match(r"label_values\((\w+), (\w+)\)", expr).groups()
            _wait_for(prom, f"count by ({label}) ({metric})", bool)  # the job picker finds the job
            continue
        promql = expr.replace("$__rate_interval", "1m").replace("$job_id", JOB)
        _query(prom, promql)  # asserts Prometheus accepts it
