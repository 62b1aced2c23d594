"""gpuemu's outputs judged by the third-party tools its users' pipelines run, each pinned in
scripts/install-deps.sh: a signed report verified by securesystemslib's DSSE implementation, and
action.yml, examples/workflows and the workflow `init` writes validated by check-jsonschema against
SchemaStore's GitHub schemas. (SARIF's official schema, Jenkins' JUnit XSD, actionlint and moto's S3
run in the unit and e2e tests of their formats.) Both directions: a tampered input is refused.
"""
import base64
import json
import os
import shutil
import subprocess

import pytest
from cryptography.hazmat.primitives.serialization import load_pem_public_key
from securesystemslib.dsse import Envelope
from securesystemslib.exceptions import VerificationError
from securesystemslib.signer import SSlibKey

from e2e_support import REPO, one_op_toml

SCRIPTS = REPO / "tests" / "e2e" / "scripts"


def run(binary, cwd, *args):
    env = dict(os.environ, GPUEMU_HOME=str(cwd / ".gpuemu-home"), HOME=str(cwd))
    return subprocess.run([str(binary), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_a_signed_report_verifies_with_securesystemslib(tmp_path, gpuemu_bin):
    (tmp_path / "gpuemu.toml").write_text(one_op_toml("op_identity.py", validation="test_cases = 2"))
    for script in ("_proto.py", "op_identity.py", "ref_identity.py"):
        shutil.copy(SCRIPTS / script, tmp_path / script)
    assert run(gpuemu_bin, tmp_path, "keygen", "--out", "keys").returncode == 0
    proc = run(gpuemu_bin, tmp_path, "ci", "run", "--iterations", "2", "--sign-key", "keys/gpuemu.key", "--out", "out")
    assert proc.returncode == 0, proc.stderr

    text = (tmp_path / "out" / "REPORT.json").read_text()
    envelope = Envelope.from_dict(json.loads(text))  # from_dict consumes the dict it is given
    public = load_pem_public_key((tmp_path / "keys" / "gpuemu.pub").read_bytes())
    key = SSlibKey.from_crypto(public, keyid=next(iter(envelope.signatures)))  # gpuemu's key id names it
    assert list(envelope.verify([key], 1)) == [key.keyid]
    statement = json.loads(envelope.payload)
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    assert statement["subject"] and all(s["digest"]["sha256"] for s in statement["subject"])

    tampered = dict(json.loads(text), payload=base64.b64encode(json.dumps(dict(statement, predicate={})).encode()).decode())
    with pytest.raises(VerificationError):
        Envelope.from_dict(tampered).verify([key], 1)


def check_jsonschema():
    found = shutil.which("check-jsonschema")
    if found is None:
        pytest.fail("check-jsonschema is not installed: scripts/install-deps.sh installs it (pinned)")
    return found


def validate(schema, *files):
    return subprocess.run([check_jsonschema(), "--builtin-schema", schema, *map(str, files)], capture_output=True,
                          text=True, timeout=120)


def test_action_and_workflows_pass_schemastore_schemas(tmp_path, gpuemu_bin):
    assert run(gpuemu_bin, tmp_path, "init").returncode == 0
    workflows = sorted((REPO / "examples" / "workflows").glob("*.yml")) + [tmp_path / ".github/workflows/gpuemu.yml"]
    proc = validate("vendor.github-workflows", *workflows)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = validate("vendor.github-actions", REPO / "action.yml")
    assert proc.returncode == 0, proc.stdout + proc.stderr

    broken = tmp_path / "broken.yml"
    broken.write_text((REPO / "examples" / "workflows" / "pre-merge.yml").read_text().replace("runs-on:", "runs_on:"))
    assert validate("vendor.github-workflows", broken).returncode == 1
