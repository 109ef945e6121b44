"""The native module exports PyInit__perseus and nothing else (python/module.map).

PyTorch's CUDA libraries export copies of libstdc++ objects; a module that
exports its own, or binds to theirs, crashed on an H200 machine (docs/real_gpu.md,
"The crash with PyTorch"). This reads the module's dynamic symbol table."""
import shutil
import subprocess

import perseus._perseus as native
import pytest


def test_the_module_exports_only_its_init_function():
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("nm (binutils) is not installed")
    out = subprocess.run([nm, "-D", "--defined-only", native.__file__], capture_output=True, text=True, check=True)
    names = [line.split()[-1] for line in out.stdout.splitlines() if line.strip()]
    assert names == ["PyInit__perseus"], names

