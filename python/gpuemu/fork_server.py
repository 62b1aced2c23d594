# The fork server gpuemu starts once per Python interpreter: it imports the warm worker (numpy and
# this package) once, then forks a worker per request, so a worker starts in milliseconds.
"""Fork server for warm workers (docs/worker-protocol.md, "The fork server").

Started as ``python -m gpuemu.fork_server`` with a SOCK_SEQPACKET Unix socket as its standard
input; gpuemu sends one JSON request per packet and reads one JSON reply per packet:

  {"op": "spawn", "argv": [...], "cwd": "...", "env": {...}}, with three file descriptors
      attached (the worker's stdin, stdout and stderr)
      -> {"pid": 1234}: a child, leader of its own process group, that runs
         ``gpuemu.worker.main(argv)`` in ``cwd`` with ``env`` as its whole environment, exactly as
         ``python -m gpuemu.worker ARGV`` would
  {"op": "reap", "pid": 1234}
      -> {"code": 0}: waits for that child; its exit code, or minus the signal that ended it

The server answers ``{"type": "ready"}`` once its imports are done, and exits when the socket
closes (gpuemu ended). It never reaps a child unasked, so a worker's process group id stays
reserved until gpuemu has killed the group and asked (as with a child of gpuemu's own).
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import socket
import sys
import traceback

from gpuemu import worker

PRELOAD_ENV = "GPUEMU_FORK_SERVER_PRELOAD"
# Modules whose import reads what gpuemu sets per worker (GPUEMU_PALLAS_INTERPRET, the Triton layers'
# settings): a worker must import them itself. Triton may be preloaded: it reads TRITON_INTERPRET when a
# kernel is defined, not at import, and a worker's triton_hook.arm() installs the layers at once on a
# Triton imported before it.
_NEVER_PRELOADED = ("jax", "gpuemu")

MAX_REQUEST = 1 << 20


def _reply(sock: socket.socket, message: dict) -> None:
    sock.send(json.dumps(message).encode())


def _name_process(name: str) -> None:
    """What ps -o comm and top show: a fork keeps the server's command line, so say it is a worker."""
    try:
        with open("/proc/self/comm", "w") as comm:
            comm.write(name)
    except OSError:
        pass  # not Linux, or /proc not mounted: only the name is lost


def _run_child(sock: socket.socket, fds: list[int], request: dict) -> None:
    """In the forked child: becomes the worker. Never returns."""
    code = 1
    try:
        os.setpgid(0, 0)
        sock.close()
        _name_process("gpuemu-worker")
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        cwd = request.get("cwd") or ""
        if cwd:
            os.chdir(cwd)
        # The whole environment gpuemu would have given a process of its own (ours may be older).
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in (request.get("env") or {}).items()})
        # As `python -m` would have it: the working directory first on sys.path, argv[0] the module.
        sys.path[0] = os.getcwd()
        argv = [str(a) for a in request.get("argv") or []]
        sys.argv = [worker.__file__, *argv]
        # A fresh process would draw numpy's global seed from the OS: so does each forked worker.
        if "numpy.random" in sys.modules:
            sys.modules["numpy.random"].seed()
        code = worker.main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001  (the worker's own errors went to its frames; this is ours)
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _spawn(sock: socket.socket, fds: list[int], request: dict) -> dict:
    if len(fds) != 3:
        return {"error": f"a spawn request needs 3 file descriptors, got {len(fds)}"}
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        _run_child(sock, fds, request)
    # Also here, so gpuemu can kill the group as soon as it has the pid (the child may not have run yet).
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass  # the child already did it, or already exited
    return {"pid": pid}


def _reap(pid: int) -> dict:
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        return {"error": f"process {pid} is not a child of this fork server"}
    return {"code": os.waitstatus_to_exitcode(status)}


def serve(sock: socket.socket) -> int:
    _reply(sock, {"type": "ready", "pid": os.getpid()})
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(sock, MAX_REQUEST, 3)
        except (ConnectionError, OSError):
            return 0
        if not data:
            return 0  # gpuemu closed its end: it has ended
        try:
            request = json.loads(data)
            op = request.get("op")
            if op == "spawn":
                reply = _spawn(sock, fds, request)
            elif op == "reap":
                reply = _reap(int(request["pid"]))
            else:
                reply = {"error": f"unknown request {op!r}"}
        except Exception as exc:  # noqa: BLE001  (a bad request is answered, the server lives on)
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        finally:
            for fd in fds:
                os.close(fd)
        _reply(sock, reply)


def _keep_freed_memory_for_reuse() -> None:
    """Each case's buffers (megabytes) are freed and asked for again by the next case; glibc's
    defaults give them back to the kernel and fault fresh zeroed pages in each time. The workers
    forked from here inherit the setting (docs/performance.md, (i))."""
    try:
        import ctypes  # lazy: glibc only, and only the server needs it

        libc = ctypes.CDLL(None)
        m_trim_threshold, m_mmap_threshold = -1, -3  # <malloc.h>
        libc.mallopt(m_mmap_threshold, 32 << 20)
        libc.mallopt(m_trim_threshold, 256 << 20)
    except (OSError, AttributeError):
        pass  # not glibc: its defaults stay


def _preload() -> None:
    """What every numpy worker imports before its first case (the numpy adapter; ml_dtypes, whose
    bfloat16 is numpy's default for a bfloat16 case), imported once here instead of in each worker:
    importing ml_dtypes registers its ufunc loops, ~4 ms of CPU a worker (docs/performance.md, (j)).
    Importing adds names and dtypes only, so a worker that never uses them behaves as without."""
    for name in ("gpuemu.frameworks.numpy", "ml_dtypes"):
        try:
            importlib.import_module(name)
        except ImportError:
            pass  # not installed: the worker that needs it says so, as before
    # What gpuemu asks for besides: torch for the workers of a pytorch op, and the modules the user
    # names in GPUEMU_FORK_SERVER_PRELOAD; once here instead of in each worker (docs/worker-protocol.md).
    for name in filter(None, (n.strip() for n in os.environ.get(PRELOAD_ENV, "").split(","))):
        if name.split(".")[0] in _NEVER_PRELOADED:
            print(f"gpuemu fork server: {PRELOAD_ENV} names {name}, whose import reads what gpuemu sets per worker "
                  "(GPUEMU_PALLAS_INTERPRET, the Triton layers' settings): not preloaded", file=sys.stderr, flush=True)
            continue
        try:
            importlib.import_module(name)
        except ImportError as exc:
            print(f"gpuemu fork server: {PRELOAD_ENV}: cannot import {name} ({exc}); workers import it "
                  "themselves", file=sys.stderr, flush=True)


def _freeze_heap() -> None:
    """Moves every object the server made into the collector's permanent generation, so a worker's
    collections never walk (and so never copy-on-write) the pages they share with the server: forked
    workers spent a tenth of their start copying pages they only read (docs/performance.md, (j))."""
    gc.collect()
    gc.freeze()


def main() -> int:
    _keep_freed_memory_for_reuse()
    _preload()
    _freeze_heap()
    sock = socket.socket(fileno=os.dup(0))
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.close(devnull)
    return serve(sock)


if __name__ == "__main__":
    sys.exit(main())
