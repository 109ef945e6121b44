#!/usr/bin/env python3
"""perseusd's memory under clients that send requests and never read the replies.

Starts the built perseusd on the fake NVML, opens --clients connections that
each send --requests `supported_clocks` requests without reading a reply, and
prints the daemon's resident memory (VmRSS) idle and after --wait-s seconds of
the flood. Each client's buffered requests and unread replies are bounded
(docs/gpu_control.md, "Bounded memory"): before the bound, 63 such clients took
perseusd from 4.4 MB to 132 MB, over the DaemonSet's 128 MiB limit; with it,
15 MB.

Usage (from the source tree, after the build):
  python3 bench/daemon_memory.py build/ci
"""
import argparse
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time


def vm_rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(next(line for line in f if line.startswith("VmRSS")).split()[1])


def find_file(root, name):
    for folder, _, files in os.walk(root):
        if name in files:
            return os.path.join(folder, name)
    raise SystemExit("daemon_memory: error: no %s under %s (build the project first)" % (name, root))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("build_dir", help="the CMake build folder (build/ci)")
    p.add_argument("--clients", type=int, default=63)
    p.add_argument("--requests", type=int, default=40000, help="requests each client sends")
    p.add_argument("--wait-s", type=float, default=3.0, help="flood this long before reading the memory")
    args = p.parse_args(argv)
    perseusd = find_file(args.build_dir, "perseusd")
    nvml = find_file(args.build_dir, "libnvidia-ml.so.1")
    with tempfile.TemporaryDirectory() as tmp:
        sock = os.path.join(tmp, "perseusd.sock")
        env = dict(os.environ, FAKE_NVML_STATE=os.path.join(tmp, "state"), FAKE_NVML_GPUS="2")
        daemon = subprocess.Popen([perseusd, "--socket", sock, "--nvml-library", nvml], env=env,
                                  stderr=subprocess.DEVNULL)
        try:
            conns = []
            deadline = time.monotonic() + 10
            while not conns:
                try:
                    c = socket.socket(socket.AF_UNIX)
                    c.connect(sock)
                    conns.append(c)
                except OSError:
                    c.close()
                    if time.monotonic() > deadline or daemon.poll() is not None:
                        raise SystemExit("daemon_memory: error: perseusd did not start")
                    time.sleep(0.05)
            idle_kb = vm_rss_kb(daemon.pid)
            burst = b'{"op":"supported_clocks","gpu":0}\n' * args.requests

            def flood(c):
                try:
                    c.sendall(burst)
                except OSError:
                    pass
            for i in range(args.clients):
                if i > 0:
                    conns.append(socket.socket(socket.AF_UNIX))
                    conns[-1].connect(sock)
                threading.Thread(target=flood, args=(conns[-1],), daemon=True).start()
            time.sleep(args.wait_s)
            flood_kb = vm_rss_kb(daemon.pid)
            print("perseusd VmRSS idle: %.1f MB" % (idle_kb / 1000))
            print("perseusd VmRSS with %d clients sending %d requests each, reading nothing: %.1f MB" % (
                args.clients, args.requests, flood_kb / 1000))
            for c in conns:
                c.close()
        finally:
            daemon.terminate()
            daemon.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
