"""An S3-compatible test server that verifies AWS Signature Version 4 on every request.

GET/PUT of objects at /BUCKET/KEY (path style), kept in memory. A request whose signature,
credential scope, payload hash or security token does not check out gets 403 with an S3-style
XML error. Prints {"port": N} on stdout once listening on 127.0.0.1 (port 0 = random).
`--self-test` checks the signer against the vectors AWS publishes, then a live round trip.
Signing follows https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html.
"""
import argparse
import datetime
import hashlib
import hmac
import json
import re
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def signing_key(secret: str, date: str, region: str, service: str) -> bytes:
    k_date = _hmac(("AWS4" + secret).encode(), date)
    k_region = _hmac(k_date, region)
    k_service = _hmac(k_region, service)
    return _hmac(k_service, "aws4_request")


def _uri_encode(text: str) -> str:
    return urllib.parse.quote(text, safe="-_.~")


def canonical_query(raw_query: str) -> str:
    pairs = []
    for part in raw_query.split("&") if raw_query else []:
        key, _, value = part.partition("=")
        pairs.append((_uri_encode(urllib.parse.unquote(key)), _uri_encode(urllib.parse.unquote(value))))
    return "&".join(f"{k}={v}" for k, v in sorted(pairs))


def canonical_request(method, raw_path, raw_query, headers, signed_headers, payload_hash) -> str:
    """headers: list of (name, value) as received; signed_headers: lowercase names, sorted."""
    lines = []
    for name in signed_headers:
        values = [" ".join(v.strip().split()) for (n, v) in headers if n.lower() == name]
        lines.append(f"{name}:{','.join(values)}\n")
    return "\n".join([method, raw_path or "/", canonical_query(raw_query), "".join(lines),
                      ";".join(signed_headers), payload_hash])


def string_to_sign(amz_date: str, scope: str, request: str) -> str:
    return "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(request.encode()).hexdigest()])


def signature(secret, amz_date, region, service, request) -> str:
    scope = f"{amz_date[:8]}/{region}/{service}/aws4_request"
    key = signing_key(secret, amz_date[:8], region, service)
    return hmac.new(key, string_to_sign(amz_date, scope, request).encode(), hashlib.sha256).hexdigest()


AUTH_RE = re.compile(r"^AWS4-HMAC-SHA256 Credential=([^,]+), ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$")


class Verifier:
    def __init__(self, access_key, secret_key, region, session_token=None):
        self.access_key, self.secret_key, self.region, self.session_token = access_key, secret_key, region, session_token

    def check(self, method, raw_path, raw_query, headers, body):
        """Returns None when the request is properly signed, else the reason it is not."""
        get = lambda name: next((v for (n, v) in headers if n.lower() == name), None)  # noqa: E731
        match = AUTH_RE.match(get("authorization") or "")
        if not match:
            return "missing or malformed AWS4-HMAC-SHA256 Authorization header"
        credential, signed, sig = match.groups()
        parts = credential.split("/")
        if len(parts) != 5 or parts[0] != self.access_key:
            return "unknown access key"
        _, date, region, service, terminator = parts
        if region != self.region or service != "s3" or terminator != "aws4_request":
            return f"bad credential scope {date}/{region}/{service}/{terminator}"
        amz_date = get("x-amz-date") or ""
        try:
            when = datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.timezone.utc)
        except ValueError:
            return "missing or malformed x-amz-date"
        if amz_date[:8] != date or abs((datetime.datetime.now(datetime.timezone.utc) - when).total_seconds()) > 900:
            return "x-amz-date is not today's or not within 15 minutes"
        signed_headers = signed.split(";")
        if signed_headers != sorted(signed_headers):
            return "SignedHeaders not sorted"
        required = ["host", "x-amz-content-sha256", "x-amz-date"]
        if self.session_token:
            required.append("x-amz-security-token")
            if get("x-amz-security-token") != self.session_token:
                return "bad or missing x-amz-security-token"
        if any(name not in signed_headers for name in required):
            return f"SignedHeaders must include {';'.join(required)}"
        payload_hash = get("x-amz-content-sha256") or ""
        if payload_hash != "UNSIGNED-PAYLOAD" and payload_hash != hashlib.sha256(body).hexdigest():
            return "x-amz-content-sha256 does not match the body"
        # As S3 and moto: a header listed in SignedHeaders must be sent (curl #11664 signed "expect"
        # without sending it). A server that reads it as empty would accept what S3 refuses.
        absent = [name for name in signed_headers if get(name) is None]
        if absent:
            return f"SignatureDoesNotMatch: SignedHeaders lists {', '.join(absent)}, which the request does not send"
        request = canonical_request(method, raw_path, raw_query, headers, signed_headers, payload_hash)
        expected = signature(self.secret_key, amz_date, region, service, request)
        if not hmac.compare_digest(expected, sig):
            return "SignatureDoesNotMatch"
        # Every request again with botocore's signer, the one moto and AWS's SDKs use: this server's
        # own signer must never be the only judge.
        if not hmac.compare_digest(botocore_signature(self, method, raw_path, raw_query, headers, signed_headers,
                                                      body, region, amz_date), sig):
            return "SignatureDoesNotMatch: botocore's signer computes another signature"
        return None


def botocore_signature(verifier, method, raw_path, raw_query, headers, signed_headers, body, region, amz_date):
    """The signature botocore's S3SigV4Auth computes for the request as received (moto does the same)."""
    from botocore.auth import S3SigV4Auth  # lazy: only the servers that verify need botocore
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    kept = {name: value for (name, value) in headers if name.lower() in signed_headers}
    host = next(value for (name, value) in headers if name.lower() == "host")
    url = f"http://{host}{raw_path}" + (f"?{raw_query}" if raw_query else "")
    request = AWSRequest(method=method, url=url, data=body, headers=kept)
    request.context["timestamp"] = amz_date
    auth = S3SigV4Auth(Credentials(verifier.access_key, verifier.secret_key, verifier.session_token), "s3", region)
    return auth.signature(auth.string_to_sign(request, auth.canonical_request(request)), request)


def make_handler(verifier: Verifier, objects: dict, stats: dict):
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _reply(self, status, body=b"", content_type="application/xml"):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _error(self, status, code, message):
            self._reply(status, f"<Error><Code>{code}</Code><Message>{message}</Message></Error>".encode())

        def _handle(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            path, _, query = self.path.partition("?")
            if path == "/__stats":
                return self._reply(200, json.dumps(stats).encode(), "application/json")
            why = verifier.check(self.command, path, query, list(self.headers.items()), body)
            with lock:
                stats["requests"] = stats.get("requests", 0) + 1
                if why:
                    stats["rejected"] = stats.get("rejected", 0) + 1
                    stats["last_rejection"] = why
            if why:
                return self._error(403, "SignatureDoesNotMatch" if "Signature" in why else "AccessDenied", why)
            with lock:
                stats["verified_by_botocore"] = stats.get("verified_by_botocore", 0) + 1
            if self.command == "PUT":
                objects[path] = body
                return self._reply(200)
            if self.command in ("GET", "HEAD"):
                if path not in objects:
                    return self._error(404, "NoSuchKey", "The specified key does not exist.")
                return self._reply(200, objects[path], "application/json")
            return self._error(405, "MethodNotAllowed", self.command)

        do_GET = do_PUT = do_HEAD = do_DELETE = _handle

    return Handler


def serve(args) -> ThreadingHTTPServer:
    verifier = Verifier(args.access_key, args.secret_key, args.region, args.session_token)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(verifier, {}, {}))
    server.daemon_threads = True
    return server


# --- self-test: AWS's published examples, then a live signed and a tampered request -------------
DOC_KEY = "AKIAIOSFODNN7EXAMPLE"
DOC_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


def _vectors():
    # Signing-key derivation example from the IAM SigV4 documentation.
    key = signing_key("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "20120215", "us-east-1", "iam")
    assert key.hex() == "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d", key.hex()
    # get-vanilla from the AWS SigV4 test suite.
    request = canonical_request("GET", "/", "", [("Host", "example.amazonaws.com"), ("X-Amz-Date", "20150830T123600Z")],
                                ["host", "x-amz-date"], EMPTY_SHA256)
    sig = signature("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "20150830T123600Z", "us-east-1", "service", request)
    assert sig == "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31", sig
    # Amazon S3 API reference, "Examples: Signature Calculations": GET Object.
    host = ("Host", "examplebucket.s3.amazonaws.com")
    date = ("x-amz-date", "20130524T000000Z")
    request = canonical_request("GET", "/test.txt", "", [host, ("Range", "bytes=0-9"), ("x-amz-content-sha256",
                                EMPTY_SHA256), date], ["host", "range", "x-amz-content-sha256", "x-amz-date"],
                                EMPTY_SHA256)
    sig = signature(DOC_SECRET, "20130524T000000Z", "us-east-1", "s3", request)
    assert sig == "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41", sig
    # PUT Object (path with '$' encoded, a storage-class header, a signed Date header).
    payload = hashlib.sha256(b"Welcome to Amazon S3.").hexdigest()
    assert payload == "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072"
    request = canonical_request("PUT", "/test%24file.text", "", [("Date", "Fri, 24 May 2013 00:00:00 GMT"), host,
                                ("x-amz-content-sha256", payload), date, ("x-amz-storage-class", "REDUCED_REDUNDANCY")],
                                ["date", "host", "x-amz-content-sha256", "x-amz-date", "x-amz-storage-class"], payload)
    sig = signature(DOC_SECRET, "20130524T000000Z", "us-east-1", "s3", request)
    assert sig == "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd", sig
    # GET Bucket (list objects): query canonicalisation.
    request = canonical_request("GET", "/", "max-keys=2&prefix=J", [host, ("x-amz-content-sha256", EMPTY_SHA256), date],
                                ["host", "x-amz-content-sha256", "x-amz-date"], EMPTY_SHA256)
    sig = signature(DOC_SECRET, "20130524T000000Z", "us-east-1", "s3", request)
    assert sig == "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7", sig


def _signed(method, url, body, secret, region="us-east-1", token=None, unsent=None):
    """unsent: a header name signed (with an empty value) but not sent, as libcurl did with "Expect:"."""
    parsed = urllib.parse.urlsplit(url)
    amz_date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    headers = [("Host", parsed.netloc), ("x-amz-content-sha256", hashlib.sha256(body).hexdigest()),
               ("x-amz-date", amz_date)] + ([("x-amz-security-token", token)] if token else [])
    signed = headers + ([(unsent, "")] if unsent else [])
    names = sorted(n.lower() for n, _ in signed)
    request = canonical_request(method, parsed.path, parsed.query, signed, names, headers[1][1])
    sig = signature(secret, amz_date, region, "s3", request)
    scope = f"{amz_date[:8]}/{region}/s3/aws4_request"
    auth = f"AWS4-HMAC-SHA256 Credential={DOC_KEY}/{scope}, SignedHeaders={';'.join(names)}, Signature={sig}"
    req = urllib.request.Request(url, data=body if method == "PUT" else None, method=method,
                                 headers=dict(headers[1:]) | {"Authorization": auth})
    try:
        with urllib.request.urlopen(req, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def self_test() -> int:
    _vectors()
    args = argparse.Namespace(access_key=DOC_KEY, secret_key=DOC_SECRET, region="us-east-1", session_token="tok3n",
                              port=0)
    server = serve(args)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/bucket/dir/main.json"
    try:
        assert _signed("PUT", base, b'{"schema_version": 1}', DOC_SECRET, token="tok3n")[0] == 200
        assert _signed("GET", base, b"", DOC_SECRET, token="tok3n") == (200, b'{"schema_version": 1}')
        assert _signed("GET", base, b"", DOC_SECRET + "x", token="tok3n")[0] == 403  # wrong secret
        assert _signed("GET", base, b"", DOC_SECRET, token="other")[0] == 403  # wrong session token
        assert _signed("GET", base, b"", DOC_SECRET, region="eu-west-1", token="tok3n")[0] == 403
        assert _signed("GET", base + "x", b"", DOC_SECRET, token="tok3n")[0] == 404
        status, body = _signed("GET", base, b"", DOC_SECRET, token="tok3n", unsent="expect")
        assert status == 403 and b"which the request does not send" in body, (status, body)
    finally:
        server.shutdown()
    print("s3_server self-test: AWS vectors and live round trip passed")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--access-key", default=DOC_KEY)
    parser.add_argument("--secret-key", default=DOC_SECRET)
    parser.add_argument("--session-token")
    parser.add_argument("--region", default="us-east-1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    server = serve(args)
    print(json.dumps({"port": server.server_address[1]}), flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
