"""The deployment recipes in deploy/ (docs/deploy.md), checked against the real binaries:

- every flag the systemd units, the Kubernetes manifests and the Slurm script pass to
  `perseus serve`, `perseusd` or `python3 -m perseus.launch` is one the program accepts
  (from its --help), and the values those programs would refuse are not there;
- the manifests are consistent with themselves (ports, volumes, probe paths, the token
  file inside its Secret's mount, the database on the volume, the socket on the shared path);
- the Slurm script runs end to end with a stand-in `srun` against a real server: it
  registers the job, its tasks register as ranks and report, and the job ends `done`.
"""
import json
import os
import re
import shlex
import stat
import subprocess
import sys

import pytest

import perseus

SOURCE = os.environ.get("PERSEUS_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
DEPLOY = os.path.join(SOURCE, "deploy")


def _binary(env):
    path = os.environ.get(env)
    if not path or not os.path.exists(path):
        pytest.skip(f"{env} (the built binary) is not set")
    return path


def _flags_of(help_text):
    return set(re.findall(r"(--[a-z][a-z0-9-]*)", help_text))


def _help(*cmd):
    return subprocess.run([*cmd, "--help"], capture_output=True, text=True, check=True).stdout


def _flags_used(args):
    """The --flags in an argument list (`--x=v` and `--x v` forms)."""
    return {a.split("=", 1)[0] for a in args if a.startswith("--")}


def _yaml_docs(name):
    yaml = pytest.importorskip("yaml") if not os.environ.get("CI") else __import__("yaml")
    with open(os.path.join(DEPLOY, "kubernetes", name)) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def _arg_value(args, flag):
    for i, a in enumerate(args):
        if a.startswith(flag + "="):
            return a.split("=", 1)[1]
        if a == flag and i + 1 < len(args):
            return args[i + 1]
    return None


def _unit_exec(unit):
    with open(os.path.join(DEPLOY, "systemd", unit)) as f:
        text = f.read()
    line = next(l for l in text.splitlines() if l.startswith("ExecStart="))
    return shlex.split(line[len("ExecStart="):]), text


def test_systemd_units_pass_only_real_flags():
    serve = _flags_of(_help(_binary("PERSEUS_CLI"), "serve"))
    daemon = _flags_of(_help(_binary("PERSEUSD")))
    argv, text = _unit_exec("perseus-server.service.in")
    assert argv[0].endswith("/perseus") and argv[1] == "serve"
    assert _flags_used(argv) <= serve, _flags_used(argv) - serve
    assert "LoadCredential=token:/etc/perseus/token" in text and _arg_value(argv, "--token-file") == "%d/token"
    assert _arg_value(argv, "--db").startswith("/var/lib/perseus/") and "StateDirectory=perseus" in text
    argv, text = _unit_exec("perseusd.service.in")
    assert argv[0].endswith("/perseusd")
    assert _flags_used(argv) <= daemon, _flags_used(argv) - daemon
    assert _arg_value(argv, "--socket") == "/run/perseus/perseusd.sock" and "RuntimeDirectory=perseus" in text


def _containers(docs, kind):
    for d in docs:
        if d["kind"] == kind:
            yield d, d["spec"]["template"]["spec"]


def test_kubernetes_server_deployment_is_consistent():
    serve = _flags_of(_help(_binary("PERSEUS_CLI"), "serve"))
    docs = _yaml_docs("perseus-server.yaml")
    (deploy, pod), = list(_containers(docs, "Deployment"))
    assert deploy["spec"]["replicas"] == 1 and deploy["spec"]["strategy"]["type"] == "Recreate"  # one writer
    c, = pod["containers"]
    args = c["args"]
    assert args[0] == "serve" and _flags_used(args) <= serve, _flags_used(args) - serve
    port = int(_arg_value(args, "--port"))
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert ports["http"] == port
    for probe in ("readinessProbe", "livenessProbe"):
        assert c[probe]["httpGet"]["path"] == "/healthz" and c[probe]["httpGet"]["port"] in ("http", port)
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert set(mounts) == set(volumes)
    assert _arg_value(args, "--db").startswith(mounts["db"] + "/")
    claim = volumes["db"]["persistentVolumeClaim"]["claimName"]
    assert any(d["kind"] == "PersistentVolumeClaim" and d["metadata"]["name"] == claim for d in docs)
    assert _arg_value(args, "--token-file") == mounts["token"] + "/token"
    assert volumes["token"]["secret"]["secretName"] == "perseus-token"
    assert _arg_value(args, "--host") == "0.0.0.0"
    service, = [d for d in docs if d["kind"] == "Service"]
    assert service["spec"]["selector"] == deploy["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["ports"][0]["targetPort"] in ("http", port)


def test_kubernetes_daemonset_and_training_pods_share_the_socket():
    daemon = _flags_of(_help(_binary("PERSEUSD")))
    (ds, pod), = list(_containers(_yaml_docs("perseusd-daemonset.yaml"), "DaemonSet"))
    c, = pod["containers"]
    assert c["command"] == ["/usr/bin/perseusd"] and _flags_used(c["args"]) <= daemon, _flags_used(c["args"]) - daemon
    socket = _arg_value(c["args"], "--socket")
    mount, = c["volumeMounts"]
    assert socket.startswith(mount["mountPath"] + "/")
    host_dir = pod["volumes"][0]["hostPath"]["path"]
    allowed_uid = int(_arg_value(c["args"], "--allow-uid"))
    server_docs = _yaml_docs("perseus-server.yaml")
    service, = [d for d in server_docs if d["kind"] == "Service"]
    (job, tpod), = list(_containers(_yaml_docs("training-job-example.yaml"), "Job"))
    t, = tpod["containers"]
    env = {e["name"]: e for e in t["env"]}
    assert env["PERSEUS_GPU"]["value"] == "daemon:" + socket
    assert tpod["volumes"][0]["hostPath"]["path"] == host_dir
    assert any(m["mountPath"] == mount["mountPath"] for m in t["volumeMounts"])
    assert tpod["securityContext"]["runAsUser"] == allowed_uid
    name, ns, port = service["metadata"]["name"], service["metadata"]["namespace"], service["spec"]["ports"][0]["port"]
    assert env["PERSEUS_SERVER"]["value"] == f"http://{name}.{ns}.svc:{port}"
    assert env["PERSEUS_TOKEN"]["valueFrom"]["secretKeyRef"]["name"] == "perseus-token"


def test_dockerfile_installs_the_package():
    with open(os.path.join(DEPLOY, "docker", "Dockerfile")) as f:
        text = f.read()
    assert "FROM debian:bookworm" in text and "apt-get install" in text and "perseus_*.deb" in text
    version = perseus.__version__
    for name in ("perseus-server.yaml", "perseusd-daemonset.yaml"):
        images = {c["image"] for _, pod in _containers(_yaml_docs(name), "Deployment" if "server" in name else
                                                       "DaemonSet") for c in pod["containers"]}
        assert images == {f"perseus:{version}"}, images  # the manifests follow the version


RANK_SCRIPT = r'''
import os, sys, time
import perseus
rank = int(os.environ["RANK"])
client = perseus.RankClient(os.environ["PERSEUS_SERVER"], os.environ["PERSEUS_JOB"], rank=rank, dp_rank=0,
                            pp_rank=rank, tp_rank=0, gpu_index=int(os.environ["LOCAL_RANK"]),
                            gpu=os.environ["PERSEUS_GPU"], poll_interval_ms=20, restore_on_signal=False)
order = ["forward", "forward", "backward", "backward"] if rank == 0 else ["forward", "backward"] * 2
deadline = time.time() + 30
while client.stats()["iterations_sent"] < 5:
    assert time.time() < deadline, client.stats()
    client.on_step_begin()
    for ins in order:
        client.on_instruction_begin(ins)
        client.simulate(ins, 0.002)
        client.on_instruction_end(ins)
    client.on_step_end()
    time.sleep(0.01)
client.close()
'''


def _slurm_stand_ins(server, tmp_path):
    """The sbatch script's environment under bash: a stand-in srun that starts SLURM_NTASKS local
    tasks, python3 the interpreter the module was built for, rank.py as the training script."""
    srun = tmp_path / "bin" / "srun"
    srun.parent.mkdir()
    srun.write_text('#!/bin/bash\n# stand-in: drop srun flags, run the command once per task\n'
                    'while [[ $1 == --* ]]; do shift; done\npids=()\n'
                    'for ((i = 0; i < SLURM_NTASKS; i++)); do SLURM_PROCID=$i SLURM_LOCALID=$i "$@" & pids+=($!); done\n'
                    'rc=0; for p in "${pids[@]}"; do wait $p || { r=$?; ((r > rc)) && rc=$r; }; done; exit $rc\n')
    srun.chmod(srun.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "rank.py").write_text(RANK_SCRIPT)
    token = tmp_path / "token"
    token.write_text("unused-by-this-server\n")
    env = dict(os.environ, PATH=f"{srun.parent}:{os.environ['PATH']}", SLURM_JOB_ID="4242", SLURM_NTASKS="2",
               PERSEUS_SERVER=server, PERSEUS_TOKEN_FILE=str(token), PERSEUS_GPU="simulated:A100",
               DP="1", PP="2", TP="1", MICROBATCHES="2", TRAIN=f"{sys.executable} {tmp_path / 'rank.py'}",
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    # python3 in the script must be the interpreter the module was built for.
    shim = tmp_path / "bin" / "python3"
    shim.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    return env, os.path.join(DEPLOY, "slurm", "perseus-job.sbatch")


def _released_once(tmp_path, **carbon):
    """A job spec that may release-pause the job (fixed intensity: the server never pauses it), and a
    training script whose rank 0 exits with perseus.EXIT_PAUSED the first time (until `marker` exists)
    and otherwise runs rank.py. Returns (spec, marker, script)."""
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"carbon": dict({"source": "fixed", "value_g_per_kwh": 300, "job_hours": 1,
                                                "pause": "release"}, **carbon)}))
    marker = tmp_path / "paused-once"
    pausing = tmp_path / "pausing.py"
    pausing.write_text("import os, sys\nimport perseus\nmarker = %r\n"
                       "if os.environ['RANK'] == '0' and not os.path.exists(marker):\n"
                       "    open(marker, 'w').close()\n    sys.exit(perseus.EXIT_PAUSED)\n"
                       "exec(open(%r).read())\n" % (str(marker), str(tmp_path / "rank.py")))
    return spec, marker, pausing


def test_slurm_script_runs_a_job_end_to_end(server, tmp_path):
    """The sbatch script under bash with a stand-in srun that starts SLURM_NTASKS local tasks."""
    env, script = _slurm_stand_ins(server, tmp_path)
    r = subprocess.run(["bash", script], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    status = perseus.job_status(server, "slurm-4242")
    assert status["phase"] == "done" and status["ranks_registered"] == 2, status
    # A world size that does not match the tasks is refused before anything registers.
    bad = subprocess.run(["bash", script], env=dict(env, SLURM_JOB_ID="4243", DP="2"), capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 1 and "DP*PP*TP = 4 but Slurm runs 2 tasks" in bad.stderr
    with pytest.raises(LookupError):
        perseus.job_status(server, "slurm-4243")
    # A job that may be released-paused: tasks that exit with perseus.EXIT_PAUSED are started again once
    # the server says the job may run (here at once: no carbon decision has paused it).
    spec, marker, pausing = _released_once(tmp_path)
    r = subprocess.run(["bash", script], env=dict(env, SLURM_JOB_ID="4244", PERSEUS_SPEC=str(spec),
                                                  TRAIN=f"{sys.executable} {pausing}"),
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "perseus-job: paused by the carbon policy" in r.stderr and marker.exists()
    status = perseus.job_status(server, "slurm-4244")
    assert status["phase"] == "done" and status["spec"]["carbon"]["pause"] == "release", status
    # A task that fails otherwise (here 3) while the job is not paused ends the script with its status.
    failing = tmp_path / "failing.py"
    failing.write_text("import sys\nsys.exit(3)\n")
    r = subprocess.run(["bash", script], env=dict(env, SLURM_JOB_ID="4245", PERSEUS_SPEC=str(spec),
                                                  TRAIN=f"{sys.executable} {failing}"),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 3 and "paused by the carbon policy" not in r.stderr, r.stdout + r.stderr


def test_slurm_script_requeues_a_released_pause(server, tmp_path):
    """PERSEUS_RELEASE=requeue: a task exiting with perseus.EXIT_PAUSED while the server says the job is
    paused makes the script submit itself again for later and end without finishing the job; the
    resubmitted script goes back to the queue while the job is still paused, and runs it otherwise."""
    env, script = _slurm_stand_ins(server, tmp_path)
    submitted = tmp_path / "sbatch.log"
    sbatch = tmp_path / "bin" / "sbatch"
    sbatch.write_text('#!/bin/bash\necho "$*" >> %s\necho "Submitted batch job 5000"\nexit ${SBATCH_RC:-0}\n'
                      % submitted)
    sbatch.chmod(sbatch.stat().st_mode | stat.S_IXUSR)
    # The server's answers to "is the job paused now?" (wait-resume --timeout-s 0), one word per call
    # from the file: "paused" exits 3 as the launcher does while the job is paused; "ask" (or none
    # left) asks the real launcher, which finds this fixed-intensity job never paused.
    answers = tmp_path / "paused-answers"
    shim = tmp_path / "bin" / "python3"
    shim.write_text('#!/bin/bash\n'
                    'if [[ "$*" == *wait-resume* && "$*" == *"--timeout-s 0"* && -s %s ]]; then\n'
                    '  read -r first rest < %s; echo "$rest" > %s\n'
                    '  [ "$first" = paused ] && exit 3\nfi\n'
                    'exec %s "$@"\n' % (answers, answers, answers, sys.executable))
    spec, marker, pausing = _released_once(tmp_path, restart_s=900)
    env = dict(env, SLURM_JOB_ID="4250", PERSEUS_SPEC=str(spec), PERSEUS_RELEASE="requeue",
               PERSEUS_REQUEUE_AFTER_S="120", TRAIN=f"{sys.executable} {pausing}")

    def run(**extra):
        return subprocess.run(["bash", script], env=dict(env, **extra), capture_output=True, text=True, timeout=120)

    answers.write_text("ask paused")  # running at the start, paused when the tasks exit with 75
    r = run()
    assert r.returncode == 0, r.stdout + r.stderr
    assert marker.exists() and answers.read_text().strip() == ""
    assert "submitted again to start in 120 s, releasing this allocation" in r.stderr, r.stderr
    assert submitted.read_text().splitlines() == [f"--begin=now+120 --export=ALL,PERSEUS_JOB=slurm-4250 {script}"]
    assert perseus.job_status(server, "slurm-4250")["phase"] != "done"  # not finished: it comes back
    # The resubmitted job (another Slurm id, the same perseus job) starts while the job is still paused:
    # back to the queue, no task started.
    answers.write_text("paused")
    r = run(SLURM_JOB_ID="5000", PERSEUS_JOB="slurm-4250", TRAIN="false")
    assert r.returncode == 0 and "releasing this allocation" in r.stderr, r.stdout + r.stderr
    assert len(submitted.read_text().splitlines()) == 2
    # Started once the job may run: the tasks run (restoring their checkpoint) and the job is done.
    r = run(SLURM_JOB_ID="5001", PERSEUS_JOB="slurm-4250")
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(submitted.read_text().splitlines()) == 2
    assert perseus.job_status(server, "slurm-4250")["phase"] == "done"
    # sbatch failing: the script waits in its allocation instead and runs the tasks again there.
    marker.unlink()
    answers.write_text("ask paused")
    r = run(SLURM_JOB_ID="4251", SBATCH_RC="1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "sbatch failed; waiting in this allocation instead" in r.stderr and marker.exists()
    assert perseus.job_status(server, "slurm-4251")["phase"] == "done"
    # A bad setting is refused before anything registers.
    r = run(SLURM_JOB_ID="4252", PERSEUS_RELEASE="later")
    assert r.returncode == 1 and "PERSEUS_RELEASE must be 'keep' or 'requeue', got 'later'" in r.stderr
    with pytest.raises(LookupError):
        perseus.job_status(server, "slurm-4252")


def test_launch_errors_are_clear(server, tmp_path):
    run = [sys.executable, "-m", "perseus.launch"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    r = subprocess.run(run + ["register", "--server", server, "--job", "bad id", "--microbatches", "2"], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 1 and "field 'id'" in r.stderr, r.stderr
    spec = tmp_path / "spec.json"
    spec.write_text('{"dp": 1,\n "pp": }')
    r = subprocess.run(run + ["register", "--server", server, "--job", "j", "--spec", str(spec)], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 1 and f"--spec {spec}: line 2" in r.stderr, r.stderr
    spec.write_text('{"dp": 1, "dp": 2}')  # the last would win silently
    r = subprocess.run(run + ["register", "--server", server, "--job", "j", "--microbatches", "2", "--spec", str(spec)],
                       env=env, capture_output=True, text=True)
    assert r.returncode == 1 and f"--spec {spec}: field 'dp': given twice in one object" in r.stderr, r.stderr
    spec.write_text('{"carbon": {"source": "fixed", "slowdown_budget": NaN}}')
    r = subprocess.run(run + ["register", "--server", server, "--job", "j", "--microbatches", "2", "--spec", str(spec)],
                       env=env, capture_output=True, text=True)
    assert r.returncode == 1 and "field 'carbon.slowdown_budget': expected a finite number, got nan" in r.stderr, \
        r.stderr
    # NaN or infinity would busy-poll or never time out; argparse refuses them (exit 2).
    for flag, value in (("--poll-s", "nan"), ("--poll-s", "0"), ("--timeout-s", "inf"), ("--timeout-s", "-1")):
        r = subprocess.run(run + ["wait-resume", "--server", server, "--job", "j", flag, value], env=env,
                           capture_output=True, text=True)
        assert r.returncode == 2 and f"argument {flag}: expected a finite number" in r.stderr, r.stderr
    r = subprocess.run(run + ["register", "--server", server, "--job", "j"], env=env, capture_output=True, text=True)
    assert r.returncode == 1 and "--microbatches" in r.stderr
    ok = subprocess.run(run + ["register", "--server", server, "--job", "j", "--microbatches", "2"], env=env,
                        capture_output=True, text=True)
    assert ok.returncode == 0 and '"created": true' in ok.stdout, ok.stderr
    again = subprocess.run(run + ["register", "--server", server, "--job", "j", "--microbatches", "2"], env=env,
                           capture_output=True, text=True)
    assert again.returncode == 0 and '"created": false' in again.stdout
    clash = subprocess.run(run + ["register", "--server", server, "--job", "j", "--microbatches", "4"], env=env,
                           capture_output=True, text=True)
    assert clash.returncode == 1 and "perseus.launch register: error:" in clash.stderr
    done = subprocess.run(run + ["finish", "--server", server, "--job", "j"], env=env, capture_output=True, text=True)
    assert done.returncode == 0 and '"phase": "done"' in done.stdout, done.stderr
