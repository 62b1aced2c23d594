# gpuemu.frameworks.triton_autotune against the real Triton interpreter and torch (no mocks): the
# configs the load check lists, the pinned config a variant runs, prune_configs_by, heuristics, pre_hook.
"""Each check runs in a fresh Python: @triton.jit reads TRITON_INTERPRET when a kernel is defined."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1]

KERNELS = textwrap.dedent('''
    import torch
    import triton
    import triton.language as tl

    CALLS = []

    def prune(configs, named_args, **kwargs):
        # configs wider than the row are never run for it
        return [c for c in configs if c.kwargs["BLOCK"] <= max(16, triton.next_power_of_2(named_args["n"]))]

    def model(**kwargs):
        CALLS.append(("model", kwargs["BLOCK"]))
        return kwargs["BLOCK"]  # narrower is "faster"

    def hook(nargs):
        CALLS.append(("pre_hook", nargs["BLOCK"]))

    @triton.autotune(configs=[triton.Config({"BLOCK": 16}, num_warps=1),
                              triton.Config({"BLOCK": 64}, num_warps=2, pre_hook=hook),
                              triton.Config({"BLOCK": 128}, num_warps=4)],
                     key=["n"], prune_configs_by={"early_config_prune": prune})
    @triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
    @triton.jit
    def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        if EVEN:
            tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 2)
        else:
            mask = offs < n
            tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)

    @triton.autotune(configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})], key=["n"],
                     prune_configs_by={"perf_model": model, "top_k": 1})
    @triton.jit
    def modelled_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1, mask=mask)

    def scale(x):
        y = torch.empty_like(x)
        scale_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, y, x.numel())
        return y, scale_kernel.best_config.kwargs["BLOCK"]

    def plus_one(x):
        y = torch.empty_like(x)
        modelled_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, y, x.numel())
        return y, modelled_kernel.best_config.kwargs["BLOCK"]

    @triton.jit
    def negate_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, -tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

    def negate(x):  # in a module with autotuned kernels, but launches none of them
        y = torch.empty_like(x)
        negate_kernel[(triton.cdiv(x.numel(), 32),)](x, y, x.numel(), BLOCK=32)
        return y

    # FlagGems' attention asserts BLOCK_N <= HEAD_DIM: on a GPU the configs that fail it do not compile
    # and the autotuner skips them
    @triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 16})], key=["n"])
    @triton.jit
    def head_kernel(x_ptr, y_ptr, n, HEAD: tl.constexpr, BLOCK: tl.constexpr):
        tl.static_assert(BLOCK <= HEAD)
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 3, mask=offs < n)

    def triple(x, head):
        y = torch.zeros_like(x)
        head_kernel[(1,)](x, y, x.numel(), HEAD=head)
        return y, head_kernel.best_config.kwargs["BLOCK"]

    @triton.autotune(configs=[triton.Config({"BLOCK": 48}), triton.Config({"BLOCK": 16})], key=["n"])
    @triton.jit
    def odd_kernel(x_ptr, n, BLOCK: tl.constexpr):  # 48 is no power of 2: an error, not a static assert
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, 1.0, mask=offs < n)

    def _launch_scale(x):
        return scale(x)

    class Scaled:  # an autograd.Function-like wrapper: its staticmethod reaches the kernel through a helper
        @staticmethod
        def forward(x):
            return _launch_scale(x)

    def scaled(x):
        return Scaled.forward(x)
''')


def run_python(tmp_path: Path, body: str, **env: str) -> dict:
    (tmp_path / "tuned.py").write_text(KERNELS)
    script = tmp_path / "main.py"
    script.write_text("import json, sys\nfrom gpuemu.frameworks import triton_autotune\nimport torch\nimport tuned\n"
                      "out = {}\n" + textwrap.dedent(body) + "\nprint(json.dumps(out))\n")
    full = {k: v for k, v in os.environ.items() if k not in ("GPUEMU_AUTOTUNE_PIN", "TRITON_INTERPRET")}
    full.update(PYTHONPATH=os.pathsep.join([str(PACKAGE), str(tmp_path)]), **env)
    proc = subprocess.run([sys.executable, str(script)], env=full, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(autouse=True)
def needs_triton():
    pytest.importorskip("triton")


def test_the_load_check_lists_autotuned_kernels_through_heuristics(tmp_path):
    out = run_python(tmp_path, '''
        out["scale"] = triton_autotune.discover(tuned.scale)
        out["plus_one"] = triton_autotune.discover(tuned.plus_one)
        out["negate"] = triton_autotune.discover(tuned.negate)
        out["scaled"] = [k["kernel"] for k in triton_autotune.discover(tuned.scaled)]
    ''', TRITON_INTERPRET="1")
    # Each op lists the autotuned kernels its code reaches, not every one its module defines.
    assert [k["kernel"] for k in out["scale"]] == ["tuned:scale_kernel"]
    assert out["scale"][0]["configs"] == ["BLOCK=16,num_warps=1", "BLOCK=64,num_warps=2", "BLOCK=128,num_warps=4"]
    assert [k["kernel"] for k in out["plus_one"]] == ["tuned:modelled_kernel"]
    assert out["plus_one"][0]["configs"] == ["BLOCK=32,num_warps=4", "BLOCK=64,num_warps=4"]
    assert out["negate"] == [], "an op that launches no autotuned kernel keeps its name and its cases"
    assert out["scaled"] == ["tuned:scale_kernel"], "reached through a class's staticmethod and a helper"


def test_a_pinned_config_runs_without_benchmarking_and_pruning_still_applies(tmp_path):
    body = '''
        assert triton_autotune.install()
        x = torch.arange(100, dtype=torch.float32)
        y, block = tuned.scale(x)
        out["block"] = block
        out["right"] = bool(torch.equal(y, x * 2))
        out["calls"] = tuned.CALLS
        small = torch.arange(10, dtype=torch.float32)
        out["small_block"] = tuned.scale(small)[1]
    '''
    pinned = run_python(tmp_path, body, TRITON_INTERPRET="1", GPUEMU_AUTOTUNE_PIN="BLOCK=64,num_warps=2")
    # The pinned config ran (its pre_hook too), and computed the right values (heuristics' EVEN honoured).
    assert pinned["block"] == 64 and pinned["right"] and pinned["calls"] == [["pre_hook", 64]]
    # For a row of 10, early_config_prune keeps only BLOCK=16: the pinned 64 is never run on a GPU there.
    assert pinned["small_block"] == 16
    wide = run_python(tmp_path, body, TRITON_INTERPRET="1", GPUEMU_AUTOTUNE_PIN="BLOCK=128,num_warps=4")
    assert wide["block"] == 128 and wide["right"] and wide["calls"] == []
    unpinned = run_python(tmp_path, body, TRITON_INTERPRET="1")
    assert unpinned["block"] == 16 and unpinned["right"]  # the first config that survives pruning


def test_a_perf_model_that_runs_on_the_cpu_prunes(tmp_path):
    out = run_python(tmp_path, '''
        triton_autotune.install()
        x = torch.zeros(100)
        y, block = tuned.plus_one(x)
        out["block"], out["right"], out["calls"] = block, bool(torch.equal(y, x + 1)), tuned.CALLS
    ''', TRITON_INTERPRET="1", GPUEMU_AUTOTUNE_PIN="BLOCK=64,num_warps=4")
    # top_k 1 of the model keeps BLOCK=32 only, so the pin of 64 yields to it.
    assert out["block"] == 32 and out["right"] and sorted(out["calls"]) == [["model", 32], ["model", 64]]


def test_several_kernels_in_one_op_each_get_their_part_of_the_pin(tmp_path):
    out = run_python(tmp_path, '''
        triton_autotune.install()
        x = torch.arange(100, dtype=torch.float32)
        out["scale"] = tuned.scale(x)[1]
        out["plus_one"] = tuned.plus_one(x)[1]
    ''', TRITON_INTERPRET="1", GPUEMU_AUTOTUNE_PIN="scale_kernel:BLOCK=128,num_warps=4;modelled_kernel:BLOCK=32,num_warps=4")
    assert out == {"scale": 128, "plus_one": 32}


def test_a_config_failing_a_static_assert_gives_way_to_the_next_as_on_a_gpu(tmp_path):
    body = '''
        triton_autotune.install()
        x = torch.arange(10, dtype=torch.float32)
        y, block = tuned.triple(x, 16)
        out["block"], out["right"] = block, bool(torch.equal(y, x * 3))
        out["wide"] = tuned.triple(x, 64)[1]
        calls = {"none_fits": lambda: tuned.triple(x, 8), "other_error": lambda: tuned.odd_kernel[(1,)](x, 10)}
        for name, call in calls.items():
            try:
                call()
                out[name] = "ran"
            except Exception as exc:
                out[name] = repr(exc)
    '''
    for pin in ({}, {"GPUEMU_AUTOTUNE_PIN": "BLOCK=64,num_warps=4"}):
        out = run_python(tmp_path, body, TRITON_INTERPRET="1", **pin)
        assert out["block"] == 16 and out["right"] and out["wide"] == 64, (pin, out)
        assert "AssertionError" in out["none_fits"], out  # no config compiles: the assert is the error
        assert "power of 2" in out["other_error"], out  # any other failure is the kernel's, never skipped


def test_no_patch_on_a_gpu_run_without_a_pin(tmp_path):
    out = run_python(tmp_path, '''
        out["installed"] = triton_autotune.install()
    ''', TRITON_INTERPRET="0")
    assert out["installed"] is False
