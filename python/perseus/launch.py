"""Job registration and completion for launch scripts (Slurm, Kubernetes, torchrun).

    python3 -m perseus.launch register --server URL --job ID --dp 8 --pp 4 --tp 2 --microbatches 8 \\
        [--schedule 1f1b|gpipe|interleaved-1f1b] [--chunks V] [--spec FILE.json] [--token-file F] [--ca-cert F]
    python3 -m perseus.launch finish --server URL --job ID [--token-file F] [--ca-cert F]
    python3 -m perseus.launch wait-resume --server URL --job ID [--poll-s S] [--timeout-s S] [--token-file F] [--ca-cert F]

`register` is safe to run from every task of a job: registering the same spec
again answers `created: false`; a different spec under the same id is refused
(exit 1). `--spec` reads any other fields of POST /jobs (profiling, straggler,
carbon; docs/http_api.md) from a JSON file; the flags override it. The token
comes from --token-file, else $PERSEUS_TOKEN; the server's CA from --ca-cert,
else $PERSEUS_CA_CERT. Prints the server's reply as JSON; errors go to stderr
with exit status 1 (2 for bad flags). deploy/slurm/perseus-job.sbatch uses it.

`wait-resume` is for jobs whose carbon policy may pause them with GPUs released
(carbon.pause "release"; docs/carbon.md, "Pausing in the server"): it returns
(exit 0, printing GET /jobs/{id}/carbon) once the job is not paused, polling
every --poll-s seconds (default 60), and exits 3 after --timeout-s (default: no
limit) while still paused; an unreachable server is asked again until then
(exit 1 once the time is up); a job that is done or failed is an error (exit 1).
A launch script starts the job again when it returns: deploy/slurm/perseus-job.sbatch
has the loop (tasks exiting with perseus.EXIT_PAUSED, 75, or killed while the
server says the job is paused).
"""
import argparse
import json
import os
import sys
import time

from . import _argtypes, carbon_status, finish_job, register_job

# wait-resume's exit status when --timeout-s passes while the job is still paused.
EXIT_STILL_PAUSED = 3


def _read_token(path):
    if not path:
        return os.environ.get("PERSEUS_TOKEN", "")
    with open(path, encoding="utf-8") as f:
        token = f.read().strip()
    if not token:
        raise ValueError(f"--token-file {path}: empty")
    return token


def _object_without_repeated_keys(pairs):
    """json.load's object hook: a key given twice would otherwise be read as its last value."""
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise ValueError(f"field '{key}': given twice in one object")
        obj[key] = value
    return obj


def _read_spec(path):
    if not path:
        return {}
    with open(path, encoding="utf-8") as f:
        try:
            spec = json.load(f, object_pairs_hook=_object_without_repeated_keys)
        except json.JSONDecodeError as e:
            raise ValueError(f"--spec {path}: line {e.lineno}: {e.msg}") from None
        except ValueError as e:
            raise ValueError(f"--spec {path}: {e}") from None
    if not isinstance(spec, dict):
        raise ValueError(f"--spec {path}: expected a JSON object")
    return spec


def _spec_from(args):
    spec = _read_spec(args.spec)
    spec["id"] = args.job
    for field in ("dp", "pp", "tp", "microbatches", "chunks", "schedule"):
        value = getattr(args, field)
        if value is not None:
            spec[field] = value
    if "microbatches" not in spec:
        raise ValueError("--microbatches (or 'microbatches' in --spec) is required")
    return spec


def _parser():
    p = argparse.ArgumentParser(prog="python3 -m perseus.launch", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    for name, what in (("register", "register the job (idempotent)"), ("finish", "mark the job done"),
                       ("wait-resume", "wait until the carbon policy no longer pauses the job")):
        s = sub.add_parser(name, help=what)
        s.add_argument("--server", required=True, help="the server's URL, http:// or https://")
        s.add_argument("--job", required=True, help="the job id (1-64 of [A-Za-z0-9._-])")
        s.add_argument("--token-file", default="", help="file holding the bearer token (else $PERSEUS_TOKEN)")
        s.add_argument("--ca-cert", default="", help="https: the server's CA bundle (else $PERSEUS_CA_CERT)")
        if name == "register":
            for field in ("dp", "pp", "tp", "microbatches", "chunks"):
                s.add_argument("--" + field, type=int, default=None)
            s.add_argument("--schedule", default=None, choices=["1f1b", "gpipe", "interleaved-1f1b"])
            s.add_argument("--spec", default="", help="JSON file with further POST /jobs fields")
        if name == "wait-resume":
            s.add_argument("--poll-s", type=_argtypes.seconds(0), default=60.0,
                           help="seconds between checks (default 60)")
            s.add_argument("--timeout-s", type=_argtypes.seconds(0, inclusive=True), default=None,
                           help="give up after this long (exit 3)")
    return p


def _wait_resume(args, token):
    deadline = None if args.timeout_s is None else time.monotonic() + args.timeout_s
    while True:
        try:
            reply = carbon_status(args.server, args.job, token=token, ca_cert=args.ca_cert)
        except ConnectionError as e:  # a server restarting: keep asking until the timeout
            if deadline is not None and time.monotonic() >= deadline:
                raise
            print(f"perseus.launch wait-resume: {e} (retrying)", file=sys.stderr)
            reply = {"paused": True}
        if reply.get("phase") in ("done", "failed"):
            raise RuntimeError(f"job {args.job!r} is {reply['phase']}: it will not be resumed")
        if not reply.get("paused", False):
            return reply
        if deadline is not None and time.monotonic() >= deadline:
            print(f"perseus.launch wait-resume: job {args.job!r} is still paused after {args.timeout_s} s: "
                  f"{reply.get('explanation', '')}", file=sys.stderr)
            return None
        time.sleep(args.poll_s if deadline is None else max(0.0, min(args.poll_s, deadline - time.monotonic())))


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        token = _read_token(args.token_file)
        if args.command == "register":
            reply = register_job(args.server, _spec_from(args), token=token, ca_cert=args.ca_cert)
        elif args.command == "wait-resume":
            reply = _wait_resume(args, token)
            if reply is None:
                return EXIT_STILL_PAUSED
        else:
            reply = finish_job(args.server, args.job, token=token, ca_cert=args.ca_cert)
    except (ValueError, LookupError, OSError, RuntimeError) as e:
        print(f"perseus.launch {args.command}: error: {e}", file=sys.stderr)
        return 1
    print(json.dumps(reply))
    return 0


if __name__ == "__main__":
    sys.exit(main())
