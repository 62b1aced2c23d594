# End-to-end tests of the signed report commands with the real gpuemu binary: keygen, report
# sign/verify/render, tampering, and the exit codes of docs/verify.md. Binary: $GPUEMU_BIN.
import base64
import hashlib
import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GPUEMU = os.environ.get("GPUEMU_BIN", str(REPO / "build" / "gpuemu"))


def gpuemu(*args, cwd):
    # A private GPUEMU_HOME so `gpuemu test` never writes into the user's store.
    env = dict(os.environ, GPUEMU_HOME=str(Path(cwd) / ".gpuemu-home"))
    return subprocess.run([GPUEMU, *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def signed(tmp_path_factory):
    """A copy of examples/, a key pair, a real result.json from `gpuemu test`, and its signed report."""
    if not os.access(GPUEMU, os.X_OK):
        pytest.fail(f"gpuemu binary not found at {GPUEMU}; build it or set GPUEMU_BIN")
    root = tmp_path_factory.mktemp("attest")
    project = root / "project"
    shutil.copytree(REPO / "examples", project)
    run = gpuemu("test", "--op", "softmax", "--op", "matmul_acc_bug", "--format", "json", "-q", cwd=project)
    assert run.returncode in (0, 1), run.stderr
    (project / "result.json").write_text(run.stdout)

    keys = gpuemu("keygen", "--out", root / "keys", cwd=root)
    assert keys.returncode == 0, keys.stderr
    sign = gpuemu("report", "sign", "result.json", "--key", root / "keys/gpuemu.key", "--out", root / "REPORT.json",
                  cwd=project)
    assert sign.returncode == 0, sign.stderr
    return root, project, json.loads(run.stdout), keys.stdout.split()[-1]


def verify(root, report, *extra):
    return gpuemu("report", "verify", report, "--pub", root / "keys/gpuemu.pub", *extra, cwd=root)


def test_keygen_writes_a_0600_private_key_and_refuses_to_overwrite(signed):
    root, _, _, key_id = signed
    assert stat.S_IMODE(os.stat(root / "keys/gpuemu.key").st_mode) == 0o600
    assert (root / "keys/gpuemu.pub").read_text().startswith("-----BEGIN PUBLIC KEY-----")
    assert len(key_id) == 16
    # Refusing to overwrite without --force: tests/cli/cases/keygen_would_overwrite.case.
    scratch = root / "other-keys"
    assert gpuemu("keygen", "--out", scratch, cwd=root).returncode == 0
    forced = gpuemu("keygen", "--out", scratch, "--force", cwd=root)
    assert forced.returncode == 0, forced.stderr
    assert stat.S_IMODE(os.stat(scratch / "gpuemu.key").st_mode) == 0o600


def test_signed_report_names_the_real_files_and_measurements(signed):
    root, project, result, key_id = signed
    envelope = json.loads((root / "REPORT.json").read_text())
    assert envelope["payloadType"] == "application/vnd.in-toto+json"
    assert envelope["signatures"][0]["keyid"] == key_id
    statement = json.loads(base64.b64decode(envelope["payload"]))
    names = {s["name"]: s for s in statement["subject"]}
    assert set(names) == {"kernels/softmax.py", "kernels/matmul_acc_bug.py", "refs/softmax_ref.py",
                          "refs/matmul_ref.py", "gpuemu"}
    digest = hashlib.sha256((project / "kernels/softmax.py").read_bytes()).hexdigest()
    assert names["kernels/softmax.py"]["digest"]["sha256"] == digest
    assert names["gpuemu"]["digest"]["sha256"] == hashlib.sha256(Path(GPUEMU).read_bytes()).hexdigest()
    predicate = statement["predicate"]
    assert predicate["seed"] == result["seed"]
    assert predicate["config_digest"] == result["config_digest"]
    assert [op["op"] for op in predicate["ops"]] == [op["op"] for op in result["ops"]]


def test_verify_valid_report_exits_0(signed):
    root, project, _, key_id = signed
    plain = verify(root, "REPORT.json")
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert f"ok   signature: valid Ed25519 signature by key {key_id}" in plain.stdout
    with_files = verify(root, "REPORT.json", "--artifacts", project)
    assert with_files.returncode == 0, with_files.stdout
    assert "ok   subject kernels/softmax.py: sha256 " in with_files.stdout
    as_json = gpuemu("report", "verify", "REPORT.json", "--pub", root / "keys/gpuemu.pub", "--format", "json",
                     cwd=root)
    assert json.loads(as_json.stdout)["valid"] is True


def tampered_copy(root, name, mutate):
    envelope = json.loads((root / "REPORT.json").read_text())
    mutate(envelope)
    (root / name).write_text(json.dumps(envelope))
    return name


def test_one_changed_payload_byte_exits_1(signed):
    root = signed[0]

    def flip(envelope):
        payload = bytearray(base64.b64decode(envelope["payload"]))
        at = payload.index(b'"passed":')
        payload[at + 1] = ord("P")
        envelope["payload"] = base64.b64encode(bytes(payload)).decode()

    result = verify(root, tampered_copy(root, "payload.json", flip))
    assert result.returncode == 1
    assert "FAIL signature: signature does not match the report" in result.stdout


def test_changed_signature_exits_1(signed):
    root = signed[0]

    def flip(envelope):
        sig = bytearray(base64.b64decode(envelope["signatures"][0]["sig"]))
        sig[0] ^= 1
        envelope["signatures"][0]["sig"] = base64.b64encode(bytes(sig)).decode()

    result = verify(root, tampered_copy(root, "sig.json", flip))
    assert result.returncode == 1
    assert "FAIL signature:" in result.stdout


def test_another_key_exits_1_and_names_both_keys(signed):
    root, _, _, key_id = signed
    assert gpuemu("keygen", "--out", root / "stranger", cwd=root).returncode == 0
    result = gpuemu("report", "verify", "REPORT.json", "--pub", root / "stranger/gpuemu.pub", cwd=root)
    assert result.returncode == 1
    assert f"signature is not from the given public key: the report was signed by key {key_id}" in result.stdout


def test_changed_or_missing_subject_file_exits_1(signed):
    root, project, _, _ = signed
    artifacts = root / "artifacts"
    shutil.copytree(project, artifacts)
    with open(artifacts / "kernels/softmax.py", "a") as f:
        f.write("# patched after signing\n")
    result = verify(root, "REPORT.json", "--artifacts", artifacts)
    assert result.returncode == 1
    assert "FAIL subject kernels/softmax.py: subject 'kernels/softmax.py' changed since signing" in result.stdout
    (artifacts / "refs/matmul_ref.py").unlink()
    result = verify(root, "REPORT.json", "--artifacts", artifacts)
    assert "FAIL subject refs/matmul_ref.py: subject 'refs/matmul_ref.py' is missing" in result.stdout


def test_sign_refuses_a_result_from_another_config(signed):
    root, project, measured, _ = signed
    result = json.loads(json.dumps(measured))  # the fixture is shared: change a copy
    result["config_digest"] = "0" * 64
    (project / "other-result.json").write_text(json.dumps(result))
    sign = gpuemu("report", "sign", "other-result.json", "--key", root / "keys/gpuemu.key", "--out",
                  root / "X.json", cwd=project)
    assert sign.returncode == 2
    assert "sign with the gpuemu.toml the run used" in sign.stderr
    assert not (root / "X.json").exists()


def test_render_shows_measurements_and_verification(signed):
    root, project, result, key_id = signed
    html = gpuemu("report", "render", "REPORT.json", "--format", "html", "--pub", root / "keys/gpuemu.pub", cwd=root)
    assert html.returncode == 0, html.stderr
    assert html.stdout.startswith("<!DOCTYPE html>")
    assert f"valid: valid Ed25519 signature by key {key_id}" in html.stdout
    assert result["config_digest"] in html.stdout
    md = gpuemu("report", "render", "REPORT.json", "--format", "markdown", cwd=root)
    assert md.returncode == 0, md.stderr
    assert "**Verification:** not verified" in md.stdout
    assert f"| Master seed | {result['seed']} |" in md.stdout
    plain = gpuemu("report", "render", project / "result.json", "--format", "markdown", cwd=root)
    assert plain.returncode == 0, plain.stderr
    assert "Verification" not in plain.stdout
