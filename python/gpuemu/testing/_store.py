# Where the pytest plugin's failures go: the daemon of $GPUEMU_HOME stores them (validate /
# submit_output), the same store the CLI reads, so `gpuemu reproduce SEED` and `gpuemu show SEED` work.
"""StoreAccess: finds or starts the daemon for a session and stops it when the session started it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from gpuemu._internal.client.client import Client
from gpuemu.errors import ClientError

__all__ = ["StoreAccess", "STORE_MODES"]

# auto: store through a running daemon, else start one when a gpuemu binary is found, else say why
# the failure was not stored; daemon: the same, but not storing is an error; off: never store.
STORE_MODES = ("auto", "daemon", "off")


class StoreAccess:
    """One per pytest process. `started_marker` is a file shared by the controller and its xdist
    workers: a process that starts the daemon creates it, and the controller (which ends last)
    stops the daemon when it exists."""

    def __init__(self, mode: str, binary: str | None, started_marker: Path):
        self.mode = mode
        self.binary = binary
        self.started_marker = started_marker
        self.unavailable = ""  # why nothing can be stored, once known
        self._clients: dict[str, Client] = {}

    def find_binary(self) -> str | None:
        candidate = self.binary or os.environ.get("GPUEMU_BIN") or shutil.which("gpuemu")
        return candidate if candidate and os.access(candidate, os.X_OK) else None

    def client(self, config_path: Path) -> Client | None:
        """A client of a running daemon for this project, starting the daemon when needed; None
        (with self.unavailable set) when failures cannot be stored."""
        if self.mode == "off":
            self.unavailable = "--gpuemu-store=off"
            return None
        key = str(config_path)
        if key in self._clients:
            return self._clients[key]
        client = Client(config=key, inline=False)
        if not client._transport.available() and not self._start(config_path, client):
            client.close()
            if self.mode == "daemon":
                raise ClientError(f"--gpuemu-store=daemon: cannot store failures: {self.unavailable}")
            return None
        self._clients[key] = client
        return client

    def _start(self, config_path: Path, client: Client) -> bool:
        binary = self.find_binary()
        if binary is None:
            self.unavailable = ("no gpuemu daemon is running and no gpuemu binary was found (--gpuemu-bin, "
                                "$GPUEMU_BIN or PATH); start one with `gpuemu daemon start --background`")
            return False
        proc = subprocess.run([binary, "--config", str(config_path), "daemon", "start", "--background"],
                              capture_output=True, text=True, timeout=60)
        if proc.returncode == 0:
            self.started_marker.parent.mkdir(parents=True, exist_ok=True)
            self.started_marker.write_text(binary)
        # Exit 2 with a running pid: another xdist worker started it first; use that one.
        if client._transport.available():
            return True
        self.unavailable = f"`{binary} daemon start --background` failed (exit {proc.returncode}): " \
                           f"{proc.stderr.strip()[-500:]}"
        return False

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()

    def stop_started_daemon(self) -> str:
        """Stops the daemon this session started (controller only); returns what it did, for the summary."""
        if not self.started_marker.is_file():
            return ""
        binary = self.started_marker.read_text().strip()
        self.started_marker.unlink()
        proc = subprocess.run([binary, "daemon", "stop"], capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            return f"gpuemu: could not stop the daemon this session started: {proc.stderr.strip()}"
        return "gpuemu: stopped the daemon this session started to store failures"
