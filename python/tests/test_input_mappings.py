# Tests for a warm worker's input files kept mapped from call to call (gpuemu._internal.wire.input_mappings,
# docs/worker-protocol.md "Inputs in gpuemu's file"): reuse, a call's writes undone, new files, fallback.
"""A memfd of this test process stands in for gpuemu's input file, as in test_input_files.py."""

from __future__ import annotations

import os

import numpy as np
import pytest

from gpuemu._internal.wire import input_mappings, tensors
from gpuemu._internal.wire.input_mappings import InputMappings

pytestmark = pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="needs memfd_create (Linux)")

PAGE = os.sysconf("SC_PAGE_SIZE")


def make_file(values: np.ndarray, size: int = 4 * 4096) -> tuple[str, int]:
    fd = os.memfd_create("gpuemu-inputs-test", os.MFD_CLOEXEC)
    os.ftruncate(fd, size)
    os.pwrite(fd, values.tobytes(), 0)
    return f"/proc/{os.getpid()}/fd/{fd}", fd


def entry(path: str, n: int, offset: int = 0) -> dict:
    return {"name": "x", "dtype": "float32", "shape": [n], "strides": [1], "file": path, "offset": offset,
            "nbytes": 4 * n}


def call(mappings: InputMappings, path: str, n: int) -> np.ndarray:
    """The input a call would get: a float32 view of the file's first n elements."""
    return tensors.decode_storage("float32", [n], [1], mappings.map([entry(path, n)])[path][: 4 * n])


def test_a_call_sees_the_files_new_bytes_through_the_same_mapping():
    n = 2 * PAGE // 4  # two pages
    path, fd = make_file(np.arange(n, dtype=np.float32))
    try:
        mappings = InputMappings()
        x = call(mappings, path, n)
        assert np.array_equal(x, np.arange(n, dtype=np.float32))
        address = x.__array_interface__["data"][0]
        del x
        mappings.forget_writes()
        os.pwrite(fd, np.full(n, 7, np.float32).tobytes(), 0)  # gpuemu places the next case
        x = call(mappings, path, n)
        assert x.__array_interface__["data"][0] == address  # not mapped again
        assert np.array_equal(x, np.full(n, 7, np.float32))
    finally:
        os.close(fd)


def test_a_calls_writes_into_its_inputs_are_undone_before_the_next_call():
    n = 2 * PAGE // 4
    path, fd = make_file(np.zeros(n, np.float32))
    try:
        mappings = InputMappings()
        x = call(mappings, path, n)
        x[5] = 99  # the op writes into its input: a private copy of the first page
        assert np.frombuffer(os.pread(fd, 4, 20), np.float32)[0] == 0  # never into gpuemu's file
        del x
        os.pwrite(fd, np.full(n, 3, np.float32).tobytes(), 0)
        # Without forget_writes the written page would still show the op's copy: the test can fail.
        stale = call(mappings, path, n)
        assert stale[5] == 99 and stale[0] == 0 and stale[n - 1] == 3
        del stale
        mappings.forget_writes()
        mappings.forget_writes()  # a second time (no call between) is harmless
        x = call(mappings, path, n)
        assert np.array_equal(x, np.full(n, 3, np.float32))
    finally:
        os.close(fd)


def test_a_new_file_at_the_same_name_is_mapped_anew():
    path, fd = make_file(np.ones(16, np.float32))
    mappings = InputMappings()
    assert np.array_equal(call(mappings, path, 16), np.ones(16, np.float32))
    mappings.forget_writes()
    os.close(fd)
    path2, fd2 = make_file(np.full(16, 5, np.float32), size=8 * 4096)  # the same descriptor number
    try:
        assert path2 == path
        assert np.array_equal(call(mappings, path, 16), np.full(16, 5, np.float32))
    finally:
        os.close(fd2)


def test_at_most_three_files_stay_mapped_and_three_in_turn_are_mapped_once(monkeypatch):
    files = [make_file(np.full(16, i, np.float32)) for i in range(4)]
    mapped = []
    real_map = input_mappings.map_own_file
    monkeypatch.setattr(input_mappings, "map_own_file", lambda path, *a, **k: mapped.append(path) or real_map(path, *a, **k))
    try:
        mappings = InputMappings()
        # gpuemu's three files of one op, taken in turn (cases started ahead): each stays mapped.
        for turn in range(6):
            path, _ = files[turn % 3]
            assert np.array_equal(call(mappings, path, 16), np.full(16, turn % 3, np.float32))
            mappings.forget_writes()
        assert mapped == [path for path, _ in files[:3]]
        assert call(mappings, files[3][0], 16)[0] == 3
        mappings.forget_writes()
        assert list(mappings._maps) == [files[1][0], files[2][0], files[3][0]]
    finally:
        for _, fd in files:
            os.close(fd)


def test_without_pagemap_every_call_maps_anew(monkeypatch):
    monkeypatch.setattr(input_mappings, "_pagemap_readable", lambda: False)
    path, fd = make_file(np.zeros(16, np.float32))
    try:
        mappings = InputMappings()
        x = call(mappings, path, 16)
        x[0] = 1
        del x
        mappings.forget_writes()
        assert mappings._maps == {}
        assert call(mappings, path, 16)[0] == 0
    finally:
        os.close(fd)


def test_refusals_match_map_input_files():
    mappings = InputMappings()
    with pytest.raises(ValueError, match="not one of gpuemu's shared files"):
        mappings.map([entry("/tmp/x", 4)])
    path, fd = make_file(np.zeros(16, np.float32), size=4096)
    try:
        with pytest.raises(ValueError, match="lie outside"):
            mappings.map([entry(path, 2048)])
        with pytest.raises(ValueError, match="negative"):
            mappings.map([{**entry(path, 4), "offset": -4}])
    finally:
        os.close(fd)
