# The Triton sanitizer (gpuemu/frameworks/_triton_sanitizer.py) on real @triton.jit kernels under
# Triton's real CPU interpreter and torch: each check fails its buggy kernel and passes its correct twin.
"""No mocks: the kernels below run under TRITON_INTERPRET=1 through frameworks.Converter.call, the
call the worker makes, with a case seed; the sanitizer is installed for this module and removed after."""

import os

os.environ["TRITON_INTERPRET"] = "1"  # read by @triton.jit when each kernel below is defined

import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")

from gpuemu import frameworks  # noqa: E402
from gpuemu.errors import OutOfBoundsError  # noqa: E402
from gpuemu.frameworks import _triton_sanitizer as triton_sanitizer  # noqa: E402

THIS = os.path.basename(__file__)


@pytest.fixture(autouse=True)
def sanitizer():
    assert triton_sanitizer.install()
    yield
    triton_sanitizer.uninstall()


def call(fn, inputs, seed=1234):
    conv = frameworks.Converter(frameworks.AdapterSettings(framework="pytorch", device="cpu"))
    return conv.call(fn, inputs, {}, "float32", seed)


def line_of(marker):
    with open(__file__, encoding="utf-8") as f:
        return next(i for i, text in enumerate(f, 1) if marker in text and "line_of" not in text)


# ─── kernels ────────────────────────────────────────────────────────────────────────────────────


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, MASK_LOAD: tl.constexpr, MASK_STORE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if MASK_LOAD:
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    else:
        x = tl.load(x_ptr + offs)  # unmasked load
    if MASK_STORE:
        tl.store(y_ptr + offs, x, mask=mask)
    else:
        tl.store(y_ptr + offs, x)  # unmasked store


@triton.jit
def reduce_kernel(x_ptr, y_ptr, n, OTHER: tl.constexpr, HOW: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    if OTHER:
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0 if HOW == 2 else (-float("inf") if HOW == 0
                                                                               else float("inf")))
    else:
        x = tl.load(x_ptr + offs, mask=offs < n)  # reduce: no other=
    if HOW == 0:
        tl.store(y_ptr, tl.max(x, axis=0))
    elif HOW == 1:
        tl.store(y_ptr, tl.min(x, axis=0))
    else:
        tl.store(y_ptr, tl.sum(x, axis=0))


@triton.jit
def ticket_kernel(counter_ptr, out_ptr):
    tl.store(out_ptr + tl.program_id(0), tl.atomic_add(counter_ptr, 1))


@triton.jit
def chain_kernel(y_ptr):
    # Program i adds 1 to what program i - 1 stored: right only when programs run 0, 1, 2, ...
    pid = tl.program_id(0)
    prev = tl.load(y_ptr + pid - 1, mask=pid > 0, other=0.0)
    tl.store(y_ptr + pid, prev + 1.0)


@triton.jit
def flat_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)  # flat: no other=


@triton.jit
def strided_kernel(x_ptr, y_ptr, rows, cols, stride_r, stride_c, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < rows * cols
    x = tl.load(x_ptr + (offs // cols) * stride_r + (offs % cols) * stride_c, mask=mask)
    tl.store(y_ptr + offs, x * 2.0, mask=mask)


@triton.jit
def by_address_kernel(addr, y_ptr, BLOCK: tl.constexpr):
    src = addr.to(tl.pointer_type(tl.float32))  # a pointer made from an integer: not followable
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(src + offs))


@triton.jit
def half_writer_kernel(y_ptr, n):
    offs = tl.arange(0, 16)
    tl.store(y_ptr + offs, offs.to(tl.float32), mask=offs < n // 2)


# ─── out of bounds ──────────────────────────────────────────────────────────────────────────────


def copy_op(mask_load, mask_store, block=8):
    def op(inputs):
        x = inputs["x"]
        y = torch.empty_like(x)
        copy_kernel[(triton.cdiv(x.numel(), block),)](x, y, x.numel(), MASK_LOAD=mask_load, MASK_STORE=mask_store,
                                                      BLOCK=block)
        return y
    return op


def test_unmasked_tail_load_is_out_of_bounds_and_the_masked_twin_passes():
    x = torch.arange(13, dtype=torch.float32)
    with pytest.raises(OutOfBoundsError) as info:
        call(copy_op(False, True), {"x": x})
    message = str(info.value)
    assert info.value.kind == "out_of_bounds"
    assert "out-of-bounds load in Triton kernel 'copy_kernel'" in message
    assert f"{THIS}:{line_of('# unmasked load')}" in message
    assert "program 1, argument 'x_ptr', offsets 13, 14, 15 (3 of 8 enabled lanes)" in message
    assert "spans offsets 0..12" in message
    assert torch.equal(call(copy_op(True, True), {"x": x}), x)


def test_out_of_bounds_store_is_refused_before_it_writes():
    # y's storage is the first 10 floats of a buffer: what follows is a canary only a stray store changes.
    raw = bytearray(b"\xa5" * 256)
    y = torch.frombuffer(raw, dtype=torch.float32, count=10)
    assert y.untyped_storage().nbytes() == 40
    x = torch.arange(1, 17, dtype=torch.float32)

    def op(inputs):
        copy_kernel[(2,)](inputs["x"], y, 10, MASK_LOAD=True, MASK_STORE=False, BLOCK=8)
        return y

    with pytest.raises(OutOfBoundsError) as info:
        call(op, {"x": x})
    assert "out-of-bounds store" in str(info.value) and "argument 'y_ptr'" in str(info.value)
    assert "offsets 10, 11, 12, 13, 14, 15" in str(info.value) and "refused" in str(info.value)
    assert bytes(raw[40:]) == b"\xa5" * 216, "the canary past y is untouched"
    # The same launch on the bare interpreter writes over the canary: the check is what stopped it.
    triton_sanitizer.uninstall()
    call(op, {"x": x})
    assert bytes(raw[40:48]) == bytes(8), "the dead lanes' 0.0 landed past y"


def test_empty_tensor_is_a_clear_failure():
    x = torch.empty(0)
    with pytest.raises(OutOfBoundsError, match="has no storage"):
        call(lambda inputs: copy_kernel[(1,)](inputs["x"], torch.empty(8), 8, MASK_LOAD=False, MASK_STORE=True,
                                              BLOCK=8), {"x": x})


def test_strided_views_are_checked_against_their_storage():
    # An expanded row: 4 x 6 logical elements over a storage of 6. A kernel that walks its logical
    # length as if contiguous reads past the storage; the stride-aware twin stays inside it.
    row = torch.arange(6, dtype=torch.float32)
    x = row.expand(4, 6)

    def flat(inputs):
        y = torch.empty(24)
        flat_kernel[(1,)](inputs["x"], y, inputs["x"].numel(), BLOCK=32)
        return y

    def strided(inputs):
        v = inputs["x"]
        y = torch.empty(24)
        strided_kernel[(1,)](v, y, v.shape[0], v.shape[1], v.stride(0), v.stride(1), BLOCK=32)
        return y

    past_storage = r"offsets 6\.\.23 \(18 of 24 enabled lanes\).* spans offsets 0\.\.5"
    with pytest.raises(OutOfBoundsError, match=past_storage):
        call(flat, {"x": x})
    assert torch.equal(call(strided, {"x": x}), (x * 2).reshape(-1))
    # A view that starts inside its storage: offsets count from the view, the storage bounds them.
    base = torch.arange(10, dtype=torch.float32)
    tail = base[2:]

    def overrun(inputs):
        y = torch.empty(10)
        flat_kernel[(1,)](inputs["x"], y, 10, BLOCK=16)
        return y

    with pytest.raises(OutOfBoundsError, match=r"offsets 8, 9 .*at storage offset 2\) spans offsets -2\.\.7"):
        call(overrun, {"x": tail})


# ─── poison ─────────────────────────────────────────────────────────────────────────────────────


def reduce_op(other, how, n=5):
    def op(inputs):
        y = torch.empty(1)
        reduce_kernel[(1,)](inputs["x"], y, n, OTHER=other, HOW=how, BLOCK=8)
        return y
    return op


@pytest.mark.parametrize("how,expected", [(0, torch.max), (1, torch.min), (2, torch.sum)])
def test_masked_lanes_without_other_are_poisoned(how, expected):
    x = torch.tensor([1.0, 3.0, 2.0, 0.5, 1.5, 7.0, 7.0, 7.0])  # 5 live lanes, 3 dead
    right = expected(x[:5]).reshape(1)
    assert torch.equal(call(reduce_op(True, how), {"x": x}), right)
    wrong = call(reduce_op(False, how), {"x": x})
    assert abs(float(wrong) - float(right)) > 1e9, "a dead lane's poison decides the reduction"
    assert torch.equal(call(reduce_op(False, how), {"x": x}), wrong), "the same seed, the same poison"
    # Without the sanitizer the interpreter loads 0.0 there, which this max, min and sum never notice.
    triton_sanitizer.uninstall()
    assert abs(float(call(reduce_op(False, how), {"x": x})) - float(right)) < 1e-6 or how == 1


DEAD_LANES = "gpuemu sanitizer: note: this case loaded masked-off lanes of tl.load without other= at "


def test_a_sum_over_poisoned_lanes_gets_a_note_naming_the_load_and_the_fix(capfd):
    x = torch.tensor([1.0, 3.0, 2.0, 0.5, 1.5])
    assert abs(float(call(reduce_op(False, 2), {"x": x})) - 8.0) > 1e9
    lines = capfd.readouterr().err.splitlines()
    assert lines and lines[-1].startswith(DEAD_LANES), "the stderr's last line: what a failure's report shows"
    assert f"{THIS}:{line_of('# reduce: no other=')} (reduce_kernel)" in lines[-1]
    assert "Pass other= to tl.load, or mask the lanes before reducing them" in lines[-1]
    assert "undefined (on a GPU too" in lines[-1]
    assert sum(DEAD_LANES in line for line in lines) == 1, "one note per case, however many launches and loads"


def test_a_load_with_other_gets_no_dead_lanes_note(capfd):
    assert float(call(reduce_op(True, 2), {"x": torch.tensor([1.0, 3.0, 2.0, 0.5, 1.5])})) == 8.0
    assert "without other=" not in capfd.readouterr().err


def test_the_dead_lanes_note_is_per_case_and_names_only_that_cases_loads(capfd):
    # flat_kernel loads without other= but stores through the same mask: its result is right, and the note
    # (on stderr, which gpuemu keeps only in a failing case's report) names its load, not an earlier case's.
    x = torch.arange(10, dtype=torch.float32)

    def op(inputs):
        y = torch.empty_like(inputs["x"])
        flat_kernel[(1,)](inputs["x"], y, 10, BLOCK=16)
        return y

    call(reduce_op(False, 2), {"x": x[:5]})
    capfd.readouterr()
    assert torch.equal(call(op, {"x": x}), x * 2.0)
    err = capfd.readouterr().err
    assert f"{THIS}:{line_of('# flat: no other=')} (flat_kernel)" in err and "reduce_kernel" not in err
    assert call(lambda inputs: inputs["x"] + 1.0, {"x": x}) is not None
    assert "without other=" not in capfd.readouterr().err, "a case that loads no dead lanes gets no note"


def test_torch_empty_memory_is_poisoned_inside_the_call_only():
    def op(inputs):
        y = torch.empty(16)
        half_writer_kernel[(1,)](y, 16)
        return y

    y = call(op, {})
    assert torch.equal(y[:8], torch.arange(8, dtype=torch.float32)) and torch.isnan(y[8:]).all()
    ints = call(lambda inputs: torch.empty(64, dtype=torch.int32), {})
    assert bool((ints != 0).all())
    assert call(lambda inputs: torch.empty(4, dtype=torch.bool), {}).all()


# ─── program order ──────────────────────────────────────────────────────────────────────────────


def tickets(seed, programs=32):
    def op(inputs):
        counter = torch.zeros(1, dtype=torch.int32)
        out = torch.empty(programs, dtype=torch.int32)
        ticket_kernel[(programs,)](counter, out)
        return out
    return call(op, {}, seed).tolist()


def test_programs_run_in_an_order_the_case_seed_picks():
    first = tickets(7)
    assert sorted(first) == list(range(32)) and first != list(range(32))
    assert tickets(7) == first, "a replay of the seed runs the same order"
    assert tickets(8) != first, "another seed, another order"
    triton_sanitizer.uninstall()
    assert tickets(7) == list(range(32)), "the bare interpreter runs 0, 1, 2, ..."


def test_a_kernel_that_depends_on_program_order_gets_a_wrong_result():
    def op(inputs):
        y = torch.zeros(16)
        chain_kernel[(16,)](y)
        return y

    assert not torch.equal(call(op, {}), torch.arange(1, 17, dtype=torch.float32))


# ─── what the sanitizer cannot follow ───────────────────────────────────────────────────────────


def test_a_pointer_made_from_an_integer_gets_a_note_and_runs_unchecked(capfd):
    hidden = torch.arange(8, dtype=torch.float32)  # not a kernel argument

    def op(inputs):
        y = torch.empty(8)
        by_address_kernel[(1,)](hidden.data_ptr(), y, BLOCK=8)
        return y

    assert torch.equal(call(op, {}), hidden)
    err = capfd.readouterr().err
    assert "gpuemu sanitizer: note: Triton kernel 'by_address_kernel'" in err and "cannot follow" in err
    assert f"{THIS}:" in err and "runs unchecked" in err


def test_outside_a_gpuemu_call_the_interpreter_is_untouched():
    x = torch.arange(13, dtype=torch.float32)
    y = torch.empty_like(x)
    copy_kernel[(2,)](x, y, 13, MASK_LOAD=True, MASK_STORE=True, BLOCK=8)  # no CaseRun: nothing checked
    assert torch.equal(y, x)


# ─── arming in a worker ─────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("flag,expected", [("1", "True"), ("0", "False")])
def test_arm_installs_once_triton_is_imported_after_torch_looked_for_it(flag, expected):
    # A worker arms before the user's code runs; torch looks for triton (find_spec) when imported,
    # then the user's module imports it: the sanitizer must be installed by then, and only when asked.
    import subprocess
    import sys

    code = ("from gpuemu.frameworks import triton_hook, _triton_sanitizer as s; triton_hook.arm(); import torch; "
            "import importlib.util; importlib.util.find_spec('triton'); import triton; print(s.installed())")
    env = {**os.environ, "GPUEMU_SANITIZE": flag, "TRITON_INTERPRET": "1",
           "PYTHONPATH": os.pathsep.join([os.path.join(os.path.dirname(__file__), ".."),
                                          os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == expected, proc.stderr[-2000:]
