"""The example workflows keep the promises docs/policies.md and docs/action.md make about seeds:
a run compared with a baseline, or stored as one, uses the project's fixed seed (the strict pack's
max_error_growth compares errors of the same inputs), and the nightly's new-seed exploration is
never a baseline. Also: every workflow names the Action skelf/gpuemu-action.
"""
import re

import pytest
import yaml

from e2e_support import REPO

WORKFLOWS = sorted((REPO / "examples" / "workflows").glob("*.yml"))
ACTION = "skelf/gpuemu-action@"


def steps(workflow):
    flow = yaml.safe_load(workflow.read_text())
    for job in flow["jobs"].values():
        yield from job.get("steps", [])


def is_gate(step):
    """A step that runs `gpuemu ci run` through the action (not another command in its image)."""
    return step.get("uses", "").startswith(ACTION) and "entrypoint" not in step.get("with", {})


def stores_baseline(step):
    return step.get("uses", "").startswith(ACTION) and "baseline store" in step.get("with", {}).get("args", "")


def varying_seed(step):
    seed = str(step.get("with", {}).get("seed", ""))
    return bool(seed) and not re.fullmatch(r"\d+", seed)


def baseline_runs(workflow):
    """Gate steps compared with a baseline, and the gate step whose run a `baseline store` saves
    (the newest run in the store: the last gate step before it)."""
    found, last_gate = [], None
    for step in steps(workflow):
        if is_gate(step):
            last_gate = step
            if step.get("with", {}).get("baseline"):
                found.append(step)
        if stores_baseline(step):
            assert last_gate is not None, f"{workflow.name}: 'baseline store' before any run"
            found.append(last_gate)
    return found


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_baseline_runs_use_the_fixed_seed(workflow):
    offenders = [s.get("name", s["uses"]) for s in baseline_runs(workflow) if varying_seed(s)]
    assert not offenders, f"{workflow.name}: baseline runs with a per-run seed: {offenders}"


def test_nightly_has_a_fixed_seed_baseline_and_a_new_seed_exploration():
    nightly = REPO / "examples" / "workflows" / "nightly.yml"
    gates = [s for s in steps(nightly) if is_gate(s)]
    assert [s["with"].get("policy") for s in gates] == ["strict", "strict"]
    baseline, explore = gates
    assert baseline["with"].get("baseline") and "seed" not in baseline["with"]
    assert explore["with"]["seed"] == "${{ github.run_id }}" and "baseline" not in explore["with"]
    assert baseline_runs(nightly) == [baseline, baseline]


def test_the_check_catches_a_new_seed_baseline(tmp_path):
    """The old nightly (one strict run with a new seed each night, stored as the baseline) fails."""
    old = tmp_path / "nightly.yml"
    old.write_text(yaml.safe_dump({"jobs": {"n": {"steps": [
        {"uses": ACTION + "v1", "with": {"policy": "strict", "seed": "${{ github.run_id }}",
                                         "baseline": "gh-artifact://gpuemu-baseline"}},
        {"uses": ACTION + "v1", "with": {"entrypoint": "/usr/local/bin/gpuemu", "args": "baseline store main"}},
    ]}}}))
    assert [varying_seed(s) for s in baseline_runs(old)] == [True, True]


def test_docs_and_workflows_name_the_action_skelf_gpuemu_action():
    texts = {p: p.read_text() for p in [REPO / "README.md", *(REPO / "docs").glob("*.md"), *WORKFLOWS]}
    stale = [str(p.relative_to(REPO)) for p, text in texts.items() if "gpuemu/gpuemu@" in text]
    assert not stale, f"the Action is skelf/gpuemu-action, not gpuemu/gpuemu: {stale}"
    uses = [s["uses"] for w in WORKFLOWS for s in steps(w) if "gpuemu" in s.get("uses", "")]
    assert uses and all(u.startswith(ACTION) for u in uses), uses


def test_the_gpu_recipe_runs_the_same_config_on_a_hosted_cpu_and_a_self_hosted_gpu_runner():
    flow = yaml.safe_load((REPO / "examples" / "workflows" / "gpu-runner.yml").read_text())
    cpu, gpu = flow["jobs"]["cpu"], flow["jobs"]["gpu"]
    assert cpu["runs-on"] == "ubuntu-latest" and any(is_gate(s) for s in cpu["steps"])
    assert gpu["runs-on"] == ["self-hosted", "gpu"]
    # No container action on the GPU runner (its container would see no GPU): the binary, same config.
    assert not any(s.get("uses", "").startswith(ACTION) for s in gpu["steps"])
    runs = [s["run"] for s in gpu["steps"] if "run" in s]
    assert any(r.strip().startswith("gpuemu ci run") and "--config" not in r for r in runs)
    assert not any("config" in s.get("with", {}) for s in cpu["steps"])
    # A self-hosted runner never runs a fork's pull request.
    assert "github.event.pull_request.head.repo.full_name == github.repository" in gpu["if"]
    labels = yaml.safe_load((REPO / ".github" / "actionlint.yaml").read_text())["self-hosted-runner"]["labels"]
    assert "gpu" in labels
