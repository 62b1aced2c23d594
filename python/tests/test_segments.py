# Large tensors through shared-memory segments (docs/protocol.md "Shared-memory segments"): the
# helpers on their own, then a real daemon and warm reference worker with the threshold lowered so
# the examples' small tensors take the segment path, checked against the same requests without it.
import os
import time
from pathlib import Path

import numpy as np
import pytest

from gpuemu import Client
from gpuemu._internal.wire import segments


def _files_of(pid: int) -> list[str]:
    return [n for n in os.listdir(segments.SEGMENT_DIR) if n.startswith(f"{segments.SEGMENT_PREFIX}{pid}-")]


def test_reusable_segment_refills_one_file_and_discards_it():
    seg = segments.ReusableSegment()
    path, offsets = seg.fill([b"abc", bytearray(b"defg")])
    assert offsets == [0, 3] and Path(path).read_bytes()[:7] == b"abcdefg"
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    again, _ = seg.fill([b"xyz"])
    assert again == path and Path(path).read_bytes()[:3] == b"xyz"  # the same file, refilled
    bigger, _ = seg.fill([bytes(2 << 20)])
    assert bigger != path and not os.path.exists(path)  # grown: a new file, the old one removed
    seg.discard()
    assert not os.path.exists(bigger)


def test_read_segment_copies_only_the_named_bytes_and_survives_a_shrinking_file():
    seg = segments.ReusableSegment()
    path, _ = seg.fill([b"\x01\x02\x03\x04"])
    first = segments.read_segment(path, 1, 2)
    seg.fill([b"\x09\x09\x09"])
    os.truncate(path, 0)  # through a mapping, reading the tensor now would be a SIGBUS
    assert bytes(first) == b"\x02\x03" and not first.readonly  # a private copy
    with pytest.raises(ValueError, match="lies outside segment .* of 0 bytes"):
        segments.read_segment(path, 1, 2)
    seg.discard()
    with pytest.raises(FileNotFoundError):
        segments.read_segment(path, 0, 1)


def test_read_segment_reads_a_tensor_at_the_end_of_a_sparse_file_without_populating_it():
    path = f"{segments.SEGMENT_DIR}{segments.SEGMENT_PREFIX}test-sparse-{os.getpid()}"
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
    try:
        os.truncate(fd, 512 << 20)
        os.pwrite(fd, b"x" * 16, (512 << 20) - 16)
        assert bytes(segments.read_segment(path, (512 << 20) - 16, 16)) == b"x" * 16
        assert os.fstat(fd).st_blocks * 512 < 1 << 20  # the file stayed sparse: nothing populated it
    finally:
        os.close(fd)
        os.unlink(path)


def test_read_segment_refuses_a_fifo_without_waiting_for_a_writer():
    path = f"{segments.SEGMENT_DIR}{segments.SEGMENT_PREFIX}test-fifo-{os.getpid()}"
    os.mkfifo(path, 0o600)
    try:
        with pytest.raises(ValueError, match="not a regular file"):
            segments.read_segment(path, 0, 1)  # blocked in open() for ever before
    finally:
        os.unlink(path)


def test_lent_segments_are_reused_once_released_and_removed_on_close():
    lent = segments.LentSegments()
    a, _ = lent.lend([b"one"])
    b, _ = lent.lend([b"two"])
    assert a != b  # a is still lent: never refilled under the reader
    lent.release([a, "/dev/shm/gpuemu-unknown"])
    c, _ = lent.lend([b"three"])
    assert c == a and Path(a).read_bytes()[:5] == b"three"
    lent.close()
    assert not os.path.exists(a) and not os.path.exists(b)


def test_read_segment_refuses_files_that_are_not_ours(tmp_path):
    with pytest.raises(ValueError, match="not a file /dev/shm/gpuemu-"):
        segments.read_segment("/etc/passwd", 0, 1)
    with pytest.raises(ValueError, match="not a file"):
        segments.read_segment("/dev/shm/gpuemu-../x", 0, 1)
    path = f"{segments.SEGMENT_DIR}{segments.SEGMENT_PREFIX}test-open-{os.getpid()}"
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o644)
    os.fchmod(fd, 0o644)
    os.close(fd)
    try:
        with pytest.raises(ValueError, match="mode 0600"):
            segments.read_segment(path, 0, 0)
    finally:
        os.unlink(path)


def test_sweep_removes_segments_of_dead_processes_only():
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    dead_pid = int(dead.stdout)
    stale = f"{segments.SEGMENT_DIR}{segments.SEGMENT_PREFIX}{dead_pid}-0-test"
    live = f"{segments.SEGMENT_DIR}{segments.SEGMENT_PREFIX}{os.getpid()}-0-test"
    for path in (stale, live):
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    try:
        assert segments.sweep_stale() >= 1
        assert not os.path.exists(stale) and os.path.exists(live)
    finally:
        for path in (stale, live):
            if os.path.exists(path):
                os.unlink(path)


@pytest.fixture(scope="module")
def small_segment_daemon(start_examples_daemon, tmp_path_factory):
    """A daemon whose reference workers, like the clients here, send tensors of 1 KiB and more
    through segments."""
    running = start_examples_daemon(tmp_path_factory.mktemp("segments"), {"GPUEMU_SEGMENT_MIN_BYTES": "1024"})
    yield running
    running.stop()


def _softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)


def _client(daemon, monkeypatch, use_segments: bool) -> Client:
    monkeypatch.chdir(daemon.project)
    monkeypatch.setattr(segments, "MIN_SEGMENT_BYTES", 1024)
    monkeypatch.setenv("GPUEMU_SEGMENTS", "1" if use_segments else "0")
    return Client(socket_path=str(daemon.socket), timeout_ms=60000, inline=False)


def _summary(result):
    return (result.passed, result.kind, result.max_diff, result.max_rel_diff,
            [(w["index"], w["actual"], w["expected"]) for f in result.failures for w in f.get("worst", [])])


def test_results_through_segments_equal_results_through_the_message(small_segment_daemon, monkeypatch):
    x = np.random.default_rng(5).uniform(-30, 30, (40, 300)).astype(np.float32)  # 48 KB per tensor
    good = _softmax(x)
    bad = good.copy()
    bad[:, 290:] = 0  # an unmasked tail tile
    results = {}
    for use in (True, False):
        with _client(small_segment_daemon, monkeypatch, use) as client:
            results[use] = [client.validate_op("softmax_client", {"x": x}, out, seed=100 + i)
                            for i, out in enumerate((good, bad))]
            if use:
                assert client._transport._segment.path and _files_of(os.getpid())  # it did take the segment path
        assert not _files_of(os.getpid())  # close() removed the client's segment
    assert results[True][0].passed and not results[True][1].passed
    assert [_summary(r) for r in results[True]] == [_summary(r) for r in results[False]]


def test_a_stored_failure_keeps_its_inputs_after_the_client_refills_its_segment(small_segment_daemon, monkeypatch):
    x = np.random.default_rng(6).uniform(-30, 30, (40, 300)).astype(np.float32)
    bad = _softmax(x)
    bad[:, :7] = 0
    with _client(small_segment_daemon, monkeypatch, True) as client:
        failed = client.validate_op("softmax_client", {"x": x}, bad, seed=777)
        other = np.zeros_like(x)
        assert client.validate_op("softmax_client", {"x": other}, _softmax(other), seed=778).passed  # refills it
    with _client(small_segment_daemon, monkeypatch, True) as client:
        replay = client.reproduce(777, run_op=lambda inputs: bad)
        np.testing.assert_array_equal(replay.inputs["x"], x)  # the store kept a copy, not a view of the segment
        assert replay.from_snapshot and replay.reproduced
        assert not replay.result.passed and replay.result.max_diff == failed.max_diff


def test_worker_segments_are_removed_when_the_daemon_stops(small_segment_daemon, monkeypatch):
    before = set(os.listdir(segments.SEGMENT_DIR))
    x = np.random.default_rng(7).uniform(-30, 30, (40, 300)).astype(np.float32)
    with _client(small_segment_daemon, monkeypatch, True) as client:
        for i in range(5):  # the reference worker lends its float64 output; released ones are refilled
            assert client.validate_op("softmax_client", {"x": x}, _softmax(x), seed=900 + i).passed
    small_segment_daemon.stop()
    deadline = time.monotonic() + 10
    while set(os.listdir(segments.SEGMENT_DIR)) - before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not set(os.listdir(segments.SEGMENT_DIR)) - before
    small_segment_daemon.start()


def test_a_full_dev_shm_sends_the_tensors_in_the_message(small_segment_daemon, monkeypatch):
    def no_space(fd, offset, length):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", no_space)
    x = np.random.default_rng(8).uniform(-30, 30, (40, 300)).astype(np.float32)
    with _client(small_segment_daemon, monkeypatch, True) as client:
        assert client.validate_op("softmax_client", {"x": x}, _softmax(x), seed=950).passed
        assert not _files_of(os.getpid())


def test_a_forked_child_never_removes_or_refills_its_parents_segment():
    seg = segments.ReusableSegment()
    path, _ = seg.fill([b"parent"])
    child = os.fork()
    if child == 0:  # the child writes through its own file, then drops the inherited object
        try:
            own, _ = seg.fill([b"child!"])
            seg.discard()
            os._exit(0 if own != path and not os.path.exists(own) else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert Path(path).read_bytes()[:6] == b"parent"  # still there, unchanged
    seg.discard()
    assert not os.path.exists(path)
