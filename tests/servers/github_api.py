"""A GitHub-API-shaped test server for gh-artifact:// baselines, plus the blob storage it redirects to.

Two listeners on 127.0.0.1: the API (GET /repos/O/R, GET /repos/O/R/actions/artifacts?name=N,
GET /repos/O/R/actions/artifacts/ID/zip -> 302 to storage) and the storage (GET /blobs/ID.zip?sig=...).
The storage refuses and counts any request that carries an Authorization header: the client must not
forward its GitHub token there. GET /__stats on the API port reports what both saw.
The scenario (JSON file given by --scenario) names the repository, the default branch, the token
and the artifacts: [{"id", "name", "head_branch", "expired", "created_at", "zip": PATH}].
Prints {"api_port": N, "blob_port": M} once listening.
"""
import argparse
import json
import os
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BLOB_SIGNATURE = "sv=2024&sig=S3CRETSAS"


class State:
    def __init__(self, scenario):
        self.scenario = scenario
        self.lock = threading.Lock()
        self.stats = {"api_requests": 0, "api_unauthorized": 0, "blob_requests": 0, "blob_auth_headers": 0,
                      "blob_bad_signature": 0}
        self.api_port = self.blob_port = 0

    def count(self, key):
        with self.lock:
            self.stats[key] += 1


class Base(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state: State = None

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

    def json(self, status, document, extra=()):
        self.reply(status, json.dumps(document).encode(), extra=extra)


class Api(Base):
    def artifact_json(self, a):
        repo = self.state.scenario["repo"]
        base = f"http://127.0.0.1:{self.state.api_port}/repos/{repo}/actions/artifacts/{a['id']}"
        return {"id": a["id"], "node_id": f"MDg6QXJ0aWZhY3Q{a['id']}", "name": a["name"],
                "size_in_bytes": os.path.getsize(a["zip"]), "url": base, "archive_download_url": base + "/zip",
                "expired": a.get("expired", False), "created_at": a["created_at"],
                "expires_at": "2099-01-01T00:00:00Z", "updated_at": a["created_at"],
                "workflow_run": {"id": 1000 + a["id"], "repository_id": 1, "head_repository_id": 1,
                                 "head_branch": a["head_branch"], "head_sha": f"{a['id']:040x}"}}

    def do_GET(self):
        scenario = self.state.scenario
        path, _, query = self.path.partition("?")
        params = urllib.parse.parse_qs(query)
        if path == "/__stats":
            return self.json(200, self.state.stats)
        self.state.count("api_requests")
        token = scenario.get("token")
        if token and self.headers.get("Authorization") != f"Bearer {token}":
            self.state.count("api_unauthorized")
            return self.json(401, {"message": "Bad credentials"})
        repo = scenario["repo"]
        if path == f"/repos/{repo}":
            return self.json(200, {"full_name": repo, "default_branch": scenario["default_branch"]})
        if path == f"/repos/{repo}/actions/artifacts":
            name = params.get("name", [None])[0]
            per_page = int(params.get("per_page", ["30"])[0])
            page = int(params.get("page", ["1"])[0])
            matching = [a for a in scenario["artifacts"] if name is None or a["name"] == name]
            matching.sort(key=lambda a: a["created_at"], reverse=True)
            chosen = matching[(page - 1) * per_page: page * per_page]
            return self.json(200, {"total_count": len(matching), "artifacts": [self.artifact_json(a) for a in chosen]})
        prefix = f"/repos/{repo}/actions/artifacts/"
        if path.startswith(prefix) and path.endswith("/zip"):
            ident = int(path[len(prefix):-len("/zip")])
            if not any(a["id"] == ident for a in scenario["artifacts"]):
                return self.json(404, {"message": "Not Found"})
            location = f"http://127.0.0.1:{self.state.blob_port}/blobs/{ident}.zip?{BLOB_SIGNATURE}"
            return self.reply(302, b"", extra=[("Location", location)])
        return self.json(404, {"message": "Not Found"})


class Blob(Base):
    def do_GET(self):
        self.state.count("blob_requests")
        if "Authorization" in self.headers:
            self.state.count("blob_auth_headers")
            return self.reply(400, b"<Error>Authorization header forwarded to storage</Error>", "application/xml")
        path, _, query = self.path.partition("?")
        if query != BLOB_SIGNATURE:
            self.state.count("blob_bad_signature")
            return self.reply(403, b"<Error>AuthenticationFailed</Error>", "application/xml")
        ident = int(path.removeprefix("/blobs/").removesuffix(".zip"))
        artifact = next(a for a in self.state.scenario["artifacts"] if a["id"] == ident)
        with open(artifact["zip"], "rb") as f:
            self.reply(200, f.read(), "application/zip")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", required=True)
    args = parser.parse_args()
    with open(args.scenario) as f:
        state = State(json.load(f))
    servers = []
    for handler in (Api, Blob):
        handler.state = state
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        servers.append(server)
    state.api_port, state.blob_port = (s.server_address[1] for s in servers)
    threading.Thread(target=servers[1].serve_forever, daemon=True).start()
    print(json.dumps({"api_port": state.api_port, "blob_port": state.blob_port}), flush=True)
    servers[0].serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
