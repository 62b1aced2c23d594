#!/usr/bin/env python3
# Checks an example project's result.json for scripts/setup.sh: every *_bug op failed on the
# numbers or a check's verdict (not by crashing) and every other op passed; prints one replay command.
# An autotuned *_bug op is judged per variant: exactly the configs BUGGY_CONFIGS names fail.
"""Usage: check-example-run.py RESULT_JSON

Exit 0 and print the replay command of the first failing case when the verdicts are the
intended ones; exit 1 with what is wrong otherwise (e.g. the framework is not installed, so
every op crashed: that is not "bugs caught"). Any failure kind but op_error and reference_error
counts as caught: a mismatch, and also a verdict of a check, such as out_of_bounds from the Triton
sanitizer (docs/frameworks.md, "The sanitizer")."""
import json
import sys

# The autotune configs (variants, docs/configuration.md "Autotuned kernels") in which an example's
# *_bug kernel is wrong; its other variants are correct and must pass. The one table of this fact:
# tests/e2e/test_framework_examples.py judges with expected_to_fail() below.
BUGGY_CONFIGS = {"softmax_autotune_bug": {"BLOCK_N=16,num_warps=1"}}


def expected_to_fail(name: str) -> bool:
    """Whether an example's op (or autotune variant, "op[config]") is meant to fail."""
    base, _, config = name.partition("[")
    if not base.endswith("_bug"):
        return False
    if not config:
        return True
    return config.rstrip("]") in BUGGY_CONFIGS.get(base, set())


def main(path):
    with open(path, encoding="utf-8") as f:
        result = json.load(f)
    problems, replay = [], None
    for op in result["ops"]:
        name = op["op"]
        if expected_to_fail(name):
            kinds = {f["kind"] for f in op["failures"]}
            if op["failed"] == 0 or kinds & {"op_error", "reference_error"}:
                first = op["failures"][0]["message"] if op["failures"] else "no failure"
                problems.append(f"{name} should fail on its numbers or a check, got {sorted(kinds) or 'a pass'}: {first}")
            elif replay is None:
                replay = op["failures"][0]["replay"]
        elif op["failed"] or op["errors"]:
            problems.append(f"{name} should pass: {op['failures'][0]['message']}")
    for problem in problems:
        print(f"check-example-run: {problem}", file=sys.stderr)
    if problems or replay is None:
        return 1
    print(replay)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
