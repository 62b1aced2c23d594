"""Helpers shared by the action's tests (tests/e2e/test_action.py, tests/static/test_action_image.py):
action.yml, the Dockerfile's instructions and stages, and $GITHUB_OUTPUT as the runner reads it."""
import yaml

from e2e_support import REPO

ACTION = REPO / "action.yml"
DOCKERFILE = REPO / "Dockerfile"


def action():
    return yaml.safe_load(ACTION.read_text())


def input_variables(inputs):
    """The INPUT_* variables a runner sets: every declared input, the workflow's value or the default."""
    return {"INPUT_" + name.replace(" ", "_").upper(): inputs.get(name, spec.get("default", ""))
            for name, spec in action()["inputs"].items()}


def dockerfile_instructions(text):
    """(INSTRUCTION, arguments) pairs: comments dropped, backslash continuations joined."""
    instructions, current = [], ""
    for line in text.splitlines():
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if current and line.lstrip().startswith("#"):
            continue  # a comment inside a continued instruction
        if line.rstrip().endswith("\\"):
            current += line.rstrip()[:-1] + " "
            continue
        current += line
        keyword, _, arguments = current.strip().partition(" ")
        instructions.append((keyword.upper(), arguments.strip()))
        current = ""
    assert not current, "the Dockerfile ends inside a continued line"
    return instructions


def stages(instructions):
    result = []
    for keyword, arguments in instructions:
        if keyword == "FROM":
            result.append({"from": arguments, "instructions": []})
        else:
            assert result, f"{keyword} before the first FROM"
            result[-1]["instructions"].append((keyword, arguments))
    return result


def parse_outputs(text):
    """$GITHUB_OUTPUT the way the runner reads it: name=value lines and name<<DELIMITER blocks."""
    outputs, lines, i = {}, text.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, i + 1)
            outputs[name] = "\n".join(lines[i + 1:end])
            i = end + 1
        else:
            name, value = line.split("=", 1)
            outputs[name] = value
            i += 1
    return outputs
