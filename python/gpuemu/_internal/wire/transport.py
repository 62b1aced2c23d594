# The NNG REQ socket the client talks to the daemon over (pynng), with the errors a user can act
# on: no daemon on the socket, or no answer within the timeout.
"""NngTransport: one request, one reply, over ipc://$GPUEMU_HOME/gpuemu.sock."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from gpuemu.errors import ClientError, DaemonNotRunningError, RequestTimeoutError
from gpuemu._internal.wire import segments

__all__ = ["NngTransport", "default_socket_path"]


def _pynng() -> Any:
    try:
        # lazy: pynng (and cffi under it) costs ~0.1 s to import; workers and cold scripts import the
        # gpuemu package once per process but never open the socket.
        import pynng
    except ImportError:
        raise ClientError("the gpuemu client needs pynng to talk to the daemon: pip install pynng") from None
    return pynng


def default_socket_path() -> str:
    """$GPUEMU_HOME/gpuemu.sock, GPUEMU_HOME defaulting to ~/.gpuemu (as the daemon)."""
    home = os.environ.get("GPUEMU_HOME") or str(Path.home() / ".gpuemu")
    return str(Path(home) / "gpuemu.sock")


def _sendable(pynng, message):
    """pynng's send hands its argument to cffi, which takes bytes but not a bytearray: a bytearray
    (protocol.encode_message's one-copy buffer) goes as a cffi buffer over the same memory."""
    if isinstance(message, bytearray):
        ffi = getattr(pynng, "ffi", None)
        return ffi.from_buffer(message) if ffi is not None else bytes(message)
    return message


class NngTransport:
    """A lazily dialled REQ socket; a failed dial leaves it closed so the next call dials again."""

    def __init__(self, socket_path: str, timeout_ms: int):
        self.socket_path = socket_path
        self.timeout_ms = int(timeout_ms)
        self._socket: Any = None
        self._lock = threading.Lock()
        self._in_flight = False
        self._lost = False
        self._segment: Any = None  # segments.ReusableSegment, made on first use
        self._segments_ok: bool | None = None

    @property
    def url(self) -> str:
        return self.socket_path if "://" in self.socket_path else f"ipc://{self.socket_path}"

    def _not_running(self) -> DaemonNotRunningError:
        return DaemonNotRunningError(
            f"no gpuemu daemon is listening on {self.url}; start one with `gpuemu daemon start --background` "
            f"(with the same GPUEMU_HOME), or check socket_path")

    def _connect(self) -> Any:
        pynng = _pynng()
        if self._socket is not None:
            return self._socket
        if self.url.startswith("ipc://") and not os.path.exists(self.url[len("ipc://"):]):
            raise self._not_running()
        # resend_time=-1: NNG's REQ sends an unanswered request again after 60 s by default, and the
        # daemon would run a long fuzz or calibrate twice, then refuse the copy as busy
        # (docs/protocol.md: every client turns it off; the C++ client does).
        sock = pynng.Req0(send_timeout=self.timeout_ms, recv_timeout=self.timeout_ms, resend_time=-1)
        # A daemon killed mid-request drops the pipe; closing the socket (from another thread: nng
        # must not close from its own callback) ends the blocked recv now instead of at the timeout.
        sock.add_post_pipe_remove_cb(lambda _pipe: self._on_pipe_lost(sock))
        try:
            sock.dial(self.url, block=True)
        except pynng.NNGException:
            sock.close()
            raise self._not_running() from None
        self._socket = sock
        return sock

    def _on_pipe_lost(self, sock: Any) -> None:
        if self._in_flight and sock is self._socket:
            self._lost = True
            threading.Thread(target=sock.close, daemon=True).start()

    def available(self) -> bool:
        """True when a daemon accepts connections on the socket (dials it if needed)."""
        with self._lock:
            try:
                self._connect()
                return True
            except DaemonNotRunningError:
                return False

    def _segment_locked(self) -> Any:
        """The client's shared-memory segment for large tensors, when the daemon is on this machine."""
        if self._segments_ok is None:  # decided once per client
            self._segments_ok = (self.url.startswith("ipc://") and os.environ.get("GPUEMU_SEGMENTS", "1") != "0"
                                 and segments.available())
            if self._segments_ok:
                segments.sweep_stale()
                self._segment = segments.ReusableSegment()
        return self._segment

    def request(self, message: Any, what: str, timeout_ms: int | None = None) -> bytes:
        """Send one message and wait for its reply; timeout_ms overrides the client's for this call.

        `message` is the bytes, or a function that builds them from the client's shared-memory
        segment (or None): it runs under the lock, so the segment is never refilled while the daemon
        may still read it."""
        pynng = _pynng()
        with self._lock:
            sock = self._connect()
            if callable(message):
                build = message
                try:
                    message = build(self._segment_locked())
                except OSError:  # /dev/shm full: this request carries its tensors in the message
                    self._discard_segment_locked()
                    message = build(None)
            wait = self.timeout_ms if timeout_ms is None else int(timeout_ms)
            sock.recv_timeout = wait
            self._in_flight, self._lost = True, False
            try:
                sock.send(_sendable(pynng, message))
                return sock.recv()
            except (pynng.Closed, pynng.ConnectionReset) as exc:
                # Without resends, a request whose pipe drops fails at once with ConnectionReset
                # (with them NNG waited for another pipe, and _on_pipe_lost's close ended the wait).
                lost = self._lost or isinstance(exc, pynng.ConnectionReset)
                self._close_locked()
                if not lost:
                    raise
                raise DaemonNotRunningError(
                    f"the gpuemu daemon at {self.url} went away while answering {what} (it crashed or was "
                    f"killed); restart it with `gpuemu daemon start --background` and retry") from None
            except pynng.Timeout:
                # The daemon may be gone or hung: drop the socket so the next call dials afresh, and
                # the segment, which the daemon may still be reading.
                self._close_locked()
                self._discard_segment_locked()
                raise RequestTimeoutError(
                    f"the gpuemu daemon at {self.url} did not answer {what} within {wait} ms; it may be busy "
                    f"or hung: check `gpuemu daemon status` and `gpuemu daemon logs`, or raise timeout_ms") from None
            except pynng.NNGException as exc:
                self._close_locked()
                raise DaemonNotRunningError(f"lost the connection to the gpuemu daemon at {self.url} during {what} "
                                            f"({exc}); restart it with `gpuemu daemon start --background`") from None
            finally:
                self._in_flight = False

    def _close_locked(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None

    def _discard_segment_locked(self) -> None:
        if self._segment is not None:
            self._segment.discard()

    def close(self) -> None:
        with self._lock:
            self._close_locked()
            self._discard_segment_locked()
