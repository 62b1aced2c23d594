# GPUEMU_FORK_SERVER_PRELOAD: modules the fork server imports once for every worker it forks (torch for a
# project of torch ops), never one that reads what gpuemu sets per worker (jax, gpuemu itself).
"""python/gpuemu/fork_server.py's _preload, in a fresh interpreter (the server's own start)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def preload(value: str) -> subprocess.CompletedProcess:
    code = ("import sys\nfrom gpuemu import fork_server\nfork_server._preload()\n"
            "print(*(m in sys.modules for m in ('fractions', 'triton', 'jax')))\n")
    env = {**os.environ, "GPUEMU_FORK_SERVER_PRELOAD": value}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


def test_named_modules_are_imported_once_in_the_server():
    proc = preload("fractions, no_such_module_here")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "False", "False"]
    assert "cannot import no_such_module_here" in proc.stderr


def test_modules_that_read_the_per_worker_interpreter_choice_are_refused():
    proc = preload("gpuemu.frameworks.triton_hook,jax.numpy")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "False", "False"]
    assert proc.stderr.count("not preloaded") == 2, proc.stderr


def test_triton_may_be_preloaded():
    # Its import reads nothing gpuemu sets per worker; each worker installs its layers on it (triton_hook).
    pytest.importorskip("triton")
    proc = preload("triton")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[1:] == ["True", "False"]  # triton, not jax (importing triton may import fractions)


def test_nothing_is_preloaded_without_the_variable():
    env = {k: v for k, v in os.environ.items() if k != "GPUEMU_FORK_SERVER_PRELOAD"}
    code = "import sys\nfrom gpuemu import fork_server\nfork_server._preload()\nprint('fractions' in sys.modules)\n"
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.stdout.split() == ["False"], proc.stderr
