"""A GitHub-REST-API-shaped server for one pull request, for `gpuemu ci publish` (test_pr_review.py).

Runs in the test's process on 127.0.0.1 (random port, a thread per request) and serves the endpoints
the review publisher uses, with the request and response shapes of GitHub's REST API documentation
(docs.github.com/rest/pulls: pulls, pulls/files, pulls/comments, pulls/reviews, API version
2022-11-28):

  GET   /repos/{o}/{r}/pulls/{n}                        the pull request (head.sha)
  GET   /repos/{o}/{r}/pulls/{n}/files                  diff entries with `patch`, paginated + Link
  GET   /repos/{o}/{r}/pulls/{n}/comments               review comments, paginated + Link
  GET   /repos/{o}/{r}/pulls/{n}/reviews                reviews, paginated + Link
  POST  /repos/{o}/{r}/pulls/{n}/reviews                create a review (with line comments)
  PUT   /repos/{o}/{r}/pulls/{n}/reviews/{id}           update a review's body
  PATCH /repos/{o}/{r}/pulls/comments/{id}              update a review comment's body

Every request is checked (Authorization: Bearer TOKEN, Accept, X-GitHub-Api-Version, User-Agent) and
every write payload against the documented shape: known fields only, their types, `event` and `side`
values, a `body` where one is required, a `commit_id` of the pull request, a `path` among its files
and a `line` on the RIGHT side of that file's diff, which this server works out from the patch with
its own parser. A payload that breaks a rule gets GitHub's 422 answer and is recorded in
`violations`; a test asserts there are none. `requests` records (method, path, query, body).
"""
import json
import re
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

API_VERSION = "2022-11-28"
DOCS = "https://docs.github.com/rest/pulls"
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def right_side_lines(patch: str) -> set:
    """New-file line numbers shown by a unified diff: context and added lines."""
    lines, new, old_left, new_left = set(), 0, 0, 0
    for text in patch.split("\n"):
        if old_left > 0 or new_left > 0:
            mark = text[:1] or " "
            if mark == "\\":
                continue
            if mark in " +":
                lines.add(new)
                new += 1
                new_left -= 1
                old_left -= mark == " "
            elif mark == "-":
                old_left -= 1
            continue
        m = HUNK.match(text)
        if m:
            old_left = int(m.group(2) or 1)
            new = int(m.group(3))
            new_left = int(m.group(4) or 1)
    return lines


def user(login="github-actions[bot]", ident=41898282):
    return {"login": login, "id": ident, "node_id": "MDM6Qm90NDE4OTgyODI=", "type": "Bot", "site_admin": False,
            "avatar_url": "https://avatars.githubusercontent.com/in/15368?v=4", "url": f"https://api.github.com/users/{login}"}


class PullRequestServer:
    """One repository with one open pull request; `files` is [(filename, status, patch or None)]."""

    def __init__(self, repo, number, head_sha, files, token, base_sha="b" * 40):
        self.repo, self.number, self.head_sha, self.base_sha = repo, number, head_sha, base_sha
        self.files = files
        self.token = token
        self.known_commits = {head_sha}
        self.comments, self.reviews = [], []
        self.requests, self.violations = [], []
        self.next_id = 1000
        self.force_status = {}  # method -> (status, body) answered instead, e.g. {"POST": (403, {...})}
        self.force_headers = []  # extra headers of those answers, e.g. x-ratelimit-remaining
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    # Test helpers.
    def writes(self):
        return [r for r in self.requests if r["method"] != "GET"]

    def reset_log(self):
        with self.lock:
            self.requests.clear()

    def push(self, head_sha, files):
        """A new commit on the pull request: its head and diff change; comments keep their lines."""
        with self.lock:
            self.head_sha, self.files = head_sha, files
            self.known_commits.add(head_sha)

    def diff_lines(self):
        return {name: right_side_lines(patch) for name, _, patch in self.files if patch is not None}

    # Resource shapes, as the documentation's examples show them.
    def _pull_url(self):
        return f"{self.url}/repos/{self.repo}/pulls/{self.number}"

    def _pull(self):
        html = f"https://github.com/{self.repo}/pull/{self.number}"
        return {"url": self._pull_url(), "id": 1, "node_id": "MDExOlB1bGxSZXF1ZXN0MQ==", "html_url": html,
                "number": self.number, "state": "open", "locked": False, "title": "Faster softmax", "user": user("octocat", 1),
                "head": {"label": "octocat:feature", "ref": "feature", "sha": self.head_sha, "user": user("octocat", 1),
                         "repo": {"id": 2, "full_name": self.repo}},
                "base": {"label": "octo:main", "ref": "main", "sha": self.base_sha, "user": user("octo", 3),
                         "repo": {"id": 2, "full_name": self.repo}},
                "draft": False, "merged": False, "commits": 1, "changed_files": len(self.files)}

    def _file(self, name, status, patch):
        entry = {"sha": "%040x" % (abs(hash(name)) % (1 << 160)), "filename": name, "status": status,
                 "additions": 0 if patch is None else patch.count("\n+"),
                 "deletions": 0 if patch is None else patch.count("\n-"), "changes": 0,
                 "blob_url": f"https://github.com/{self.repo}/blob/{self.head_sha}/{name}",
                 "raw_url": f"https://github.com/{self.repo}/raw/{self.head_sha}/{name}",
                 "contents_url": f"{self.url}/repos/{self.repo}/contents/{name}?ref={self.head_sha}"}
        if patch is not None:
            entry["patch"] = patch
        return entry

    def _new_comment(self, review_id, c, commit_id):
        self.next_id += 1
        ident = self.next_id
        return {"url": f"{self.url}/repos/{self.repo}/pulls/comments/{ident}", "pull_request_review_id": review_id,
                "id": ident, "node_id": f"PRRC_{ident}", "diff_hunk": "@@ ...", "path": c["path"], "position": None,
                "original_position": None, "commit_id": commit_id, "original_commit_id": commit_id,
                "user": user(), "body": c["body"], "created_at": "2024-05-01T10:00:00Z",
                "updated_at": "2024-05-01T10:00:00Z",
                "html_url": f"https://github.com/{self.repo}/pull/{self.number}#discussion_r{ident}",
                "pull_request_url": self._pull_url(), "author_association": "NONE",
                "_links": {"self": {"href": f"{self.url}/repos/{self.repo}/pulls/comments/{ident}"}},
                "start_line": None, "original_start_line": None, "start_side": None, "line": c["line"],
                "original_line": c["line"], "side": c.get("side", "RIGHT"), "subject_type": "line"}

    def _new_review(self, body, commit_id):
        self.next_id += 1
        ident = self.next_id
        return {"id": ident, "node_id": f"PRR_{ident}", "user": user(), "body": body, "state": "COMMENTED",
                "html_url": f"https://github.com/{self.repo}/pull/{self.number}#pullrequestreview-{ident}",
                "pull_request_url": self._pull_url(), "author_association": "NONE",
                "_links": {"html": {"href": f"https://github.com/{self.repo}/pull/{self.number}#pullrequestreview-{ident}"},
                           "pull_request": {"href": self._pull_url()}},
                "submitted_at": "2024-05-01T10:00:00Z", "commit_id": commit_id}

    # Payload checks: each returns a list of problems (empty when the payload is valid).
    def _check_fields(self, payload, allowed, required, where):
        problems = []
        if not isinstance(payload, dict):
            return [f"{where}: the payload should be a JSON object"]
        problems += [f"{where}: unknown field '{k}'" for k in payload if k not in allowed]
        problems += [f"{where}: '{k}' is required" for k in required if k not in payload]
        for key, kind in allowed.items():
            value = payload.get(key)
            if key in payload and (not isinstance(value, kind) or (kind is int and isinstance(value, bool))):
                problems.append(f"{where}: '{key}' should be {kind.__name__}, found {payload[key]!r}")
        return problems

    def _check_review(self, payload):
        problems = self._check_fields(payload, {"commit_id": str, "body": str, "event": str, "comments": list}, [],
                                      "create a review")
        if problems:
            return problems
        event = payload.get("event")
        if event not in ("APPROVE", "REQUEST_CHANGES", "COMMENT"):
            problems.append(f"create a review: event {event!r} is not APPROVE, REQUEST_CHANGES or COMMENT")
        if event in ("REQUEST_CHANGES", "COMMENT") and not payload.get("body"):
            problems.append("create a review: body is required when event is REQUEST_CHANGES or COMMENT")
        if "commit_id" in payload and payload["commit_id"] not in self.known_commits:
            problems.append(f"create a review: commit_id {payload['commit_id']!r} is not a commit of the pull request")
        lines = self.diff_lines()
        names = {name for name, _, _ in self.files}
        allowed = {"path": str, "position": int, "body": str, "line": int, "side": str, "start_line": int,
                   "start_side": str}
        for i, c in enumerate(payload.get("comments", [])):
            where = f"create a review: comments[{i}]"
            found = self._check_fields(c, allowed, ["path", "body"], where)
            if found:
                problems += found
                continue
            if "position" not in c and "line" not in c:
                problems.append(f"{where}: give line (and side) or the deprecated position")
            if c.get("side", "RIGHT") not in ("LEFT", "RIGHT"):
                problems.append(f"{where}: side {c['side']!r} is not LEFT or RIGHT")
            if c["path"] not in names:
                problems.append(f"{where}: path {c['path']!r} is not a file of the pull request")
            elif c.get("side", "RIGHT") == "RIGHT" and c.get("line") not in lines.get(c["path"], set()):
                problems.append(f"{where}: Pull request review thread line must be part of the diff "
                                f"({c['path']}:{c.get('line')})")
        return problems

    # HTTP.
    def _handler(self):
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def send_json(self, status, document, extra=()):
                data = json.dumps(document).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("X-GitHub-Api-Version-Selected", API_VERSION)
                for name, value in extra:
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def fail(self, status, message, errors=None):
                document = {"message": message, "documentation_url": DOCS}
                if errors is not None:
                    document["errors"] = errors
                self.send_json(status, document)

            def paginate(self, items, query):
                per_page = int(query.get("per_page", ["30"])[0])
                page = int(query.get("page", ["1"])[0])
                if not 1 <= per_page <= 100:
                    with outer.lock:
                        outer.violations.append(f"per_page={per_page} is outside 1..100")
                per_page = max(1, min(per_page, 100))
                last = max(1, (len(items) + per_page - 1) // per_page)
                chosen = items[(page - 1) * per_page: page * per_page]
                path = urllib.parse.urlsplit(self.path).path
                links = []
                link = lambda p, rel: f'<{outer.url}{path}?per_page={per_page}&page={p}>; rel="{rel}"'  # noqa: E731
                if page > 1:
                    links.append(link(page - 1, "prev"))
                if page < last:
                    links.append(link(page + 1, "next"))
                    links.append(link(last, "last"))
                if page > 1:
                    links.append(link(1, "first"))
                self.send_json(200, chosen, [("Link", ", ".join(links))] if links else [])

            def handle_any(self, method):
                parts = urllib.parse.urlsplit(self.path)
                query = urllib.parse.parse_qs(parts.query)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = None
                if raw:
                    try:
                        body = json.loads(raw)
                    except ValueError:
                        body = raw.decode(errors="replace")
                with outer.lock:
                    outer.requests.append({"method": method, "path": parts.path, "query": query, "body": body,
                                           "authorization": self.headers.get("Authorization")})
                if self.headers.get("Authorization") != f"Bearer {outer.token}":
                    return self.fail(401, "Bad credentials")
                header_problems = []
                if self.headers.get("Accept") != "application/vnd.github+json":
                    header_problems.append(f"Accept is {self.headers.get('Accept')!r}")
                if self.headers.get("X-GitHub-Api-Version") != API_VERSION:
                    header_problems.append(f"X-GitHub-Api-Version is {self.headers.get('X-GitHub-Api-Version')!r}")
                if not self.headers.get("User-Agent"):
                    header_problems.append("no User-Agent")
                if raw and not (self.headers.get("Content-Type") or "").startswith("application/json"):
                    header_problems.append(f"Content-Type is {self.headers.get('Content-Type')!r}")
                if header_problems:
                    with outer.lock:
                        outer.violations.extend(f"{method} {parts.path}: {p}" for p in header_problems)
                    return self.fail(400, "; ".join(header_problems))
                if method in outer.force_status:
                    status, document = outer.force_status[method]
                    return self.send_json(status, document, outer.force_headers)
                with outer.lock:
                    return self.route(method, parts.path, query, body)

            def route(self, method, path, query, body):
                pulls = f"/repos/{outer.repo}/pulls/{outer.number}"
                if method == "GET" and path == pulls:
                    return self.send_json(200, outer._pull())
                if method == "GET" and path == pulls + "/files":
                    return self.paginate([outer._file(*f) for f in outer.files], query)
                if method == "GET" and path == pulls + "/comments":
                    return self.paginate(outer.comments, query)
                if method == "GET" and path == pulls + "/reviews":
                    return self.paginate(outer.reviews, query)
                if method == "POST" and path == pulls + "/reviews":
                    problems = outer._check_review(body)
                    if problems:
                        outer.violations.extend(problems)
                        return self.fail(422, "Unprocessable Entity", problems)
                    review = outer._new_review(body.get("body", ""), body.get("commit_id", outer.head_sha))
                    outer.reviews.append(review)
                    for c in body.get("comments", []):
                        outer.comments.append(outer._new_comment(review["id"], c, review["commit_id"]))
                    return self.send_json(200, review)
                m = re.fullmatch(re.escape(pulls) + r"/reviews/(\d+)", path)
                if method == "PUT" and m:
                    problems = outer._check_fields(body, {"body": str}, ["body"], "update a review")
                    review = next((r for r in outer.reviews if r["id"] == int(m.group(1))), None)
                    if problems:
                        outer.violations.extend(problems)
                        return self.fail(422, "Unprocessable Entity", problems)
                    if review is None:
                        return self.fail(404, "Not Found")
                    review["body"] = body["body"]
                    return self.send_json(200, review)
                m = re.fullmatch(rf"/repos/{re.escape(outer.repo)}/pulls/comments/(\d+)", path)
                if method == "PATCH" and m:
                    problems = outer._check_fields(body, {"body": str}, ["body"], "update a review comment")
                    comment = next((c for c in outer.comments if c["id"] == int(m.group(1))), None)
                    if problems:
                        outer.violations.extend(problems)
                        return self.fail(422, "Unprocessable Entity", problems)
                    if comment is None:
                        return self.fail(404, "Not Found")
                    comment["body"] = body["body"]
                    comment["updated_at"] = "2024-05-01T11:00:00Z"
                    return self.send_json(200, comment)
                return self.fail(404, "Not Found")

            def do_GET(self):
                self.handle_any("GET")

            def do_POST(self):
                self.handle_any("POST")

            def do_PUT(self):
                self.handle_any("PUT")

            def do_PATCH(self):
                self.handle_any("PATCH")

        return Handler
