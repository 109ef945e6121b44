"""scripts/gpu_lend: the kit that builds the Python module on a GPU machine without network
access or perseus's build dependencies (docs/real_gpu.md, "A GPU machine without the build
dependencies"). Here the kit is made from this build, the module built from it alone for this
Python, and check.sh run (without a GPU it ends in gpu_check's skip line)."""
import os
import subprocess
import sys

import pytest

CLI = os.environ.get("PERSEUS_CLI", "")
SOURCE = os.environ.get("PERSEUS_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPTS = os.path.join(SOURCE, "scripts", "gpu_lend")


def _run(argv, env=None, cwd=None):
    full_env = dict(os.environ, PY=sys.executable)
    full_env.update(env or {})
    return subprocess.run(argv, capture_output=True, text=True, env=full_env, timeout=600, cwd=cwd)


@pytest.mark.skipif(not CLI, reason="the perseus binary (PERSEUS_CLI) is not built")
def test_the_kit_builds_a_module_that_works_and_check_runs(tmp_path):
    build = os.path.normpath(os.path.join(os.path.dirname(CLI), "..", ".."))
    kit, prefix = tmp_path / "kit", tmp_path / "prefix"
    r = _run(["bash", os.path.join(SCRIPTS, "prepare.sh"), build, str(kit)])
    assert r.returncode == 0, r.stdout + r.stderr
    links = (kit / "link.txt").read_text().split()
    assert "a/libperseus_client.a" in links and "a/libperseus_common.a" in links
    assert all((kit / l).is_file() for l in links if not l.startswith("-l")), links
    assert (kit / "perseus").is_file() and (kit / "include" / "nlohmann" / "json.hpp").is_file()

    r = _run(["bash", os.path.join(SCRIPTS, "build_module.sh"), str(kit), str(prefix)])
    assert r.returncode == 0, r.stdout + r.stderr
    # Imported from the kit's build alone: the version and an optimizer call.
    csv = ("stage,instruction,frequency,time,energy\\n0,forward,1410,0.01,3\\n0,forward,1000,0.014,2.5\\n"
           "0,backward,1410,0.02,6\\n0,backward,1000,0.028,5\\n")
    code = ("import perseus; p = perseus.build_problem(perseus.parse_profile_csv('%s'), microbatches=2, "
            "blocking_power_w=50); print(perseus.__file__, perseus.__version__, len(perseus.solve_frontier(p).plans) > 1)"
            % csv)
    # From an empty folder: `python3 -c` looks in the current one first (ctest runs in <build>/python).
    r = _run([sys.executable, "-c", code], env={"PYTHONPATH": str(prefix / "python"),
                                                "LD_LIBRARY_PATH": str(prefix / "lib")}, cwd=str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith(str(prefix / "python" / "perseus" / "__init__.py")), r.stdout
    assert r.stdout.split()[2] == "True"

    pytest.importorskip("torch")
    r = _run(["bash", os.path.join(SCRIPTS, "check.sh"), str(kit), str(prefix), str(tmp_path / "out"),
              "--nvml-library", "libnvidia-ml-absent.so.1"],
             env={"PERSEUS_NVML_LIBRARY": "libnvidia-ml-absent.so.1"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "import torch, then perseus: ok" in r.stdout and "import perseus, then torch: ok" in r.stdout
    assert r.stdout.rstrip().endswith("skipped: no NVIDIA GPU (no NVIDIA driver: libnvidia-ml-absent.so.1 "
                                      "not found)"), r.stdout


def test_prepare_refuses_a_folder_without_a_build(tmp_path):
    r = _run(["bash", os.path.join(SCRIPTS, "prepare.sh"), str(tmp_path), str(tmp_path / "kit")])
    assert r.returncode == 1
    assert r.stderr.strip() == "prepare.sh: no finished build in %s (cmake --preset ci && cmake --build build/ci)" \
        % tmp_path
    assert not (tmp_path / "kit").exists()


def test_build_module_refuses_a_missing_kit(tmp_path):
    r = _run(["bash", os.path.join(SCRIPTS, "build_module.sh"), str(tmp_path / "kit"), str(tmp_path / "p")])
    assert r.returncode == 1
    assert "no kit in %s (scripts/gpu_lend/prepare.sh makes one)" % (tmp_path / "kit") in r.stderr


def test_check_refuses_a_module_not_built(tmp_path):
    (tmp_path / "kit").mkdir()
    r = _run(["bash", os.path.join(SCRIPTS, "check.sh"), str(tmp_path / "kit"), str(tmp_path / "p"),
              str(tmp_path / "out")])
    assert r.returncode == 1
    assert r.stderr.strip() == ("check.sh: no kit in {0}/kit or no module built in {0}/p (run "
                                "scripts/gpu_lend/build_module.sh {0}/kit {0}/p)".format(tmp_path))
    assert not (tmp_path / "out").exists()


def test_folders_holding_something_else_are_refused_not_emptied(tmp_path):
    other = tmp_path / "precious"
    other.mkdir()
    (other / "notes.txt").write_text("keep me")
    r = _run(["bash", os.path.join(SCRIPTS, "build_module.sh"), str(tmp_path / "kit"), str(other)])
    assert r.returncode == 1  # no kit: refused before the prefix is looked at
    (tmp_path / "kit").mkdir()
    (tmp_path / "kit" / "link.txt").write_text("")
    r = _run(["bash", os.path.join(SCRIPTS, "build_module.sh"), str(tmp_path / "kit"), str(other)])
    assert r.returncode == 1
    assert r.stderr.strip() == "build_module.sh: %s exists and holds something else: give a new or empty folder" \
        % other
    if CLI:
        build = os.path.normpath(os.path.join(os.path.dirname(CLI), "..", ".."))
        r = _run(["bash", os.path.join(SCRIPTS, "prepare.sh"), build, str(other)])
        assert r.returncode == 1
        assert r.stderr.strip() == "prepare.sh: %s exists and is not a kit: give a new or empty folder" % other
    assert (other / "notes.txt").read_text() == "keep me"
