"""The commands in README.md and docs/*.md, as written.

Every `perseus ...` and `perseusd ...` command in a code block or inline code span
is checked against the binary: its subcommand exists and each --flag is in that
subcommand's --help. Every command with nothing left to fill in (no DIR, FILE,
[optional] or ... placeholders) is also run, from a folder laid out like the
source tree (build/, examples/ and ../shared/ reachable as the docs assume), and
must exit 0. The few that cannot run here are listed in SKIP with the reason;
an entry that matches no command fails the test, so the list cannot rot.
"""
import glob
import os
import re
import shlex
import subprocess

import pytest

SOURCE = os.path.abspath(os.environ.get("PERSEUS_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")))
SUBCOMMANDS = ("optimize", "emulate", "serve", "status", "carbon", "powercap", "doctor")
# Placeholders a reader fills in: DIR, FILE.csv, PROFILE.csv, ID, N, SOCKET, [optional], ..., <x>, a|b;
# upper-case words that are real values are not.
PLACEHOLDER = re.compile(r"(?:^|[\s=/])([A-Z][A-Z0-9_]*)(?:\.csv)?(?=$|[\s,])|\[|\.\.\.|<|\|")
REAL_UPPER_CASE = {"CISO", "NYIS"}
# Commands that are not run (their flags are still checked), with why.
SKIP = {
    "--electricitymaps-zone": "needs the ElectricityMaps API on the network",
    "perseus serve --db": "a server that runs until stopped (the HTTP tests start it on a free port)",
    "perseus status --server http://127.0.0.1:7787": "needs a server on port 7787 (tested with one in test_client.py)",
    "perseus status --server https://perseus.example.org": "needs that server",
    "perseusd --socket /run/perseus/perseusd.sock": "a daemon that runs until stopped, with NVML (daemon_e2e_test)",
    "perseus doctor: GPU 0": "output shown in the docs, not a command",
}


def _code_texts(text):
    """Fenced blocks, README-style indented blocks and inline code spans."""
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.S):
        yield from _lines_with_continuations(block)
    body = re.sub(r"```.*?```", "", text, flags=re.S)
    indented, current = [], []
    for line in body.splitlines():
        if line.startswith("    ") and line.strip():
            current.append(line[4:])
        else:
            if current:
                indented.append("\n".join(current))
            current = []
    if current:
        indented.append("\n".join(current))
    for block in indented:
        yield from _lines_with_continuations(block)
    for span in re.findall(r"`([^`\n]+)`", body):
        yield span


def _lines_with_continuations(block):
    joined = re.sub(r"\\\n\s*", " ", block)
    yield from joined.splitlines()


def _commands():
    found = []
    for path in [os.path.join(SOURCE, "README.md")] + sorted(glob.glob(os.path.join(SOURCE, "docs", "*.md"))):
        with open(path) as f:
            for text in _code_texts(f.read()):
                for part in re.split(r";|&&", text):
                    part = re.sub(r"\s+#.*$", "", part).strip().rstrip("&").strip()
                    if re.match(r"(perseus|perseusd)( |$)", part):
                        found.append((os.path.relpath(path, SOURCE), part))
    return sorted(set(found))


def _program(words):
    """(binary name, subcommand or None) of a command's words, or None for prose and bare names."""
    if words[0] == "perseusd":
        return ("perseusd", None) if len(words) > 1 and words[1].startswith(("--", "[--")) else None
    if len(words) > 1 and words[1] == "--version":
        return ("perseus", None)
    if len(words) > 2 and words[1] in SUBCOMMANDS:
        return ("perseus", words[1])
    return None


def _has_placeholder(command):
    for match in PLACEHOLDER.finditer(command):
        if match.group(1) is None or match.group(1) not in REAL_UPPER_CASE:
            return True
    return False


_help_cache = {}


def _help_flags(binary, sub):
    key = (binary, sub)
    if key not in _help_cache:
        cmd = [binary] + ([sub] if sub else []) + ["--help"]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        _help_cache[key] = set(re.findall(r"--[a-z][a-z0-9-]*", out))
    return _help_cache[key]


@pytest.fixture(scope="module")
def binaries():
    cli = os.environ.get("PERSEUS_CLI")
    daemon = os.environ.get("PERSEUSD")
    if not cli or not daemon:
        if os.environ.get("CI"):
            pytest.fail("PERSEUS_CLI and PERSEUSD must be set under CI")
        pytest.skip("PERSEUS_CLI/PERSEUSD (the built binaries) are not set")
    return {"perseus": cli, "perseusd": daemon}


def test_docs_have_commands():
    commands = _commands()
    assert len(commands) > 30, commands  # the extraction works at all
    assert any("perseus optimize --example" in c for _, c in commands)


def test_every_documented_flag_exists(binaries):
    problems = []
    for doc, command in _commands():
        words = command.replace("[", " ").replace("]", " ").split()
        program = _program(words)
        if program is None:
            continue
        binary, sub = program
        known = _help_flags(binaries[binary], sub)
        for word in words:
            flag = word.split("=", 1)[0]
            if flag.startswith("--") and flag not in known and flag != "--help":
                problems.append(f"{doc}: `{command}`: {flag} is not a flag of {binary} {sub or ''}".rstrip())
    assert not problems, "\n".join(problems)


def _runnable():
    """Each concrete command once (the first document that shows it)."""
    out, seen = [], set()
    for doc, command in _commands():
        if _program(command.split()) is None or command in seen:
            continue
        if any(key in command for key in SKIP) or _has_placeholder(command):
            continue
        seen.add(command)
        out.append((doc, command))
    return out


def test_skip_list_matches_documented_commands():
    commands = [c for _, c in _commands()]
    stale = [key for key in SKIP if not any(key in c for c in commands)]
    assert not stale, f"SKIP entries that match no documented command: {stale}"


@pytest.fixture(scope="module")
def tree(tmp_path_factory, binaries):
    """A folder laid out like the source tree's root, with ../shared beside it."""
    root = tmp_path_factory.mktemp("docs")
    work = root / "work"
    work.mkdir()
    for name in ("examples", "scripts", "python", "deploy"):
        os.symlink(os.path.join(SOURCE, name), work / name)
    build = os.path.dirname(os.path.dirname(os.path.dirname(binaries["perseus"])))  # <build>/src/cli/perseus
    (work / "build").mkdir()
    os.symlink(build, work / "build" / "ci")
    shared = os.environ.get("PERSEUS_SHARED_DATA", os.path.join(SOURCE, "..", "shared", "data"))
    (root / "shared").mkdir()
    if os.path.isdir(shared):
        os.symlink(os.path.abspath(shared), root / "shared" / "data")
    return work


@pytest.mark.parametrize("doc,command", _runnable(), ids=lambda v: v if "/" in v or v.endswith(".md") else None)
def test_documented_command_runs_as_written(doc, command, tree, binaries):
    if "../shared" in command and not os.path.isdir(tree.parent / "shared" / "data"):
        if os.environ.get("CI"):
            pytest.fail("../shared/data is missing; CI needs it")
        pytest.skip("../shared/data not found")
    bindir = os.path.dirname(binaries["perseus"])
    env = dict(os.environ, PATH=os.pathsep.join([bindir, os.path.dirname(binaries["perseusd"]), os.environ["PATH"]]))
    argv = shlex.split(command)
    argv[0] = binaries[argv[0]]
    r = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{doc}: `{command}` exited {r.returncode}:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
