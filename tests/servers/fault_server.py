"""An HTTP store with injected faults, for testing baseline transfers against misbehaving servers.

The first path segment picks the behaviour, the last one names the document (kept in memory):
  /ok/.../NAME             GET the stored document (404 if none), PUT stores it (201)
  /flaky-N/.../NAME        the first N requests answer 500, then like /ok (default document if none)
  /ratelimit-S/.../NAME    the first request answers 429 with Retry-After: S, then like /ok
  /slow/.../NAME           sends the headers, then the body one byte every 0.5 s
  /truncated/.../NAME      announces 100 bytes more than it sends, then closes the connection
  /html/.../NAME           200 with an HTML page (wrong content)
  /oversize-N/.../NAME     200 with N bytes and a Content-Length
  /stream-N/.../NAME       200 with N bytes, no Content-Length (ends at close)
  /status-C/.../NAME       always status C
GET /__stats answers {"hits": {path: count}, "authorization": [every Authorization header seen]}.
Prints {"port": N} once listening on 127.0.0.1.
"""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DEFAULT_DOCUMENT = b'{"schema_version": 1, "tag": "main", "entries": []}'
LOCK = threading.Lock()
DOCUMENTS: dict = {}
HITS: dict = {}
AUTHORIZATION: list = []


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body=b"", content_type="application/json", extra=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def handle_request(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        path = self.path.partition("?")[0]
        if path == "/__stats":
            with LOCK:
                return self.reply(200, json.dumps({"hits": HITS, "authorization": AUTHORIZATION}).encode())
        segments = [s for s in path.split("/") if s]
        mode, name = (segments[0], segments[-1]) if len(segments) >= 2 else ("ok", segments[-1] if segments else "")
        kind, _, arg = mode.partition("-")
        with LOCK:
            HITS[path] = HITS.get(path, 0) + 1
            hit = HITS[path]
            if "Authorization" in self.headers:
                AUTHORIZATION.append(self.headers["Authorization"])
            stored = DOCUMENTS.get(name)
        if kind == "flaky" and hit <= int(arg):
            return self.reply(500, b'{"error": "injected failure"}')
        if kind == "ratelimit" and hit == 1:
            return self.reply(429, b'{"error": "slow down"}', extra=[("Retry-After", arg)])
        if kind == "status":
            return self.reply(int(arg), b'{"error": "injected status"}')
        if self.command == "PUT":
            with LOCK:
                DOCUMENTS[name] = body
            return self.reply(201)
        document = stored if stored is not None else (None if kind == "ok" else DEFAULT_DOCUMENT)
        if kind == "html":
            return self.reply(200, b"<!DOCTYPE html><html><body>Sign in</body></html>", "text/html")
        if kind == "oversize":
            return self.reply(200, b"x" * int(arg))
        if kind == "stream":
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            for start in range(0, int(arg), 65536):
                self.wfile.write(b"x" * min(65536, int(arg) - start))
            return None
        if document is None:
            return self.reply(404, b'{"error": "no such document"}')
        if kind == "slow":
            self.send_response(200)
            self.send_header("Content-Length", str(len(document)))
            self.end_headers()
            for byte in document:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.5)
            return None
        if kind == "truncated":
            self.send_response(200)
            self.send_header("Content-Length", str(len(document) + 100))
            self.end_headers()
            self.wfile.write(document)
            self.wfile.flush()
            self.close_connection = True
            return None
        return self.reply(200, document)

    do_GET = do_PUT = handle_request


def main() -> int:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(json.dumps({"port": server.server_address[1]}), flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
