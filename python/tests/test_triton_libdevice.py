# Every libdevice function of the installed Triton, run by a kernel under the real interpreter with gpuemu's
# layer, against torch on CPU (float64, rounded to the result type) for fp32, fp64, fp16 and bf16 inputs.
"""The list of functions is read from the installed Triton (each libdevice module's public functions), so a
Triton that adds one fails here until gpuemu maps it (triton_libdevice.NAMES) and this file has its
reference (REFERENCES). Bounds (docs/frameworks.md, "libdevice"): fp32 and fp64 results within 2 ulp of
torch's float64 value rounded to the result type (ULP_ALLOWANCE lists the few functions whose torch
reference is itself less exact), fp16/bf16 inputs (converted to fp32 in the kernel, as the compiler
requires) within 1 ulp of the 16-bit type; integer results and directed roundings exactly."""

from __future__ import annotations

import ast
import inspect
import math
from fractions import Fraction
import sys

import numpy as np
import pytest
import torch

from triton_interpreted import interpreting

with interpreting():
    import triton
    import triton.language as tl

    from gpuemu.frameworks import _triton_compat as triton_compat, _triton_libdevice as triton_libdevice

    @triton.jit
    def apply(a_ptr, b_ptr, c_ptr, d_ptr, y_ptr, N: tl.constexpr, ARITY: tl.constexpr, FN: tl.constexpr,
              WIDEN: tl.constexpr):
        offsets = tl.arange(0, N)
        a = tl.load(a_ptr + offsets)
        b = tl.load(b_ptr + offsets)
        c = tl.load(c_ptr + offsets)
        d = tl.load(d_ptr + offsets)
        if WIDEN:  # fp16/bf16 inputs: the compiler's libdevice takes fp32, so a kernel converts first
            if a.dtype.is_floating():
                a = a.to(tl.float32)
            if b.dtype.is_floating():
                b = b.to(tl.float32)
            c, d = c.to(tl.float32), d.to(tl.float32)
        if ARITY == 1:
            y = FN(a)
        elif ARITY == 2:
            y = FN(a, b)
        elif ARITY == 3:
            y = FN(a, b, c)
        else:
            y = FN(a, b, c, d)
        tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty))

MODULES = [m for m in (sys.modules.get(n) for n in triton_compat.LIBDEVICE_MODULES) if m is not None]
NAMES = sorted({n for m in MODULES for n, v in vars(m).items()
                if not n.startswith("_") and getattr(v, "__gpuemu_libdevice__", False)})
TORCH = {"fp32": torch.float32, "fp64": torch.float64, "int32": torch.int32, "uint32": torch.uint32,
         "int64": torch.int64, "uint64": torch.uint64, "fp16": torch.float16, "bf16": torch.bfloat16}
N = 64


def dispatch_tables() -> dict:
    """{name: [(arg dtypes, result dtype)]} read from the backends' sources (the compiler's dispatch dicts)."""
    tables: dict = {}
    for module in MODULES[::-1]:
        if module.__name__ == triton_compat.LIBDEVICE_MODULES[0]:
            continue
        for fn in ast.parse(inspect.getsource(module)).body:
            if isinstance(fn, ast.FunctionDef):
                table = next(n for n in ast.walk(fn) if isinstance(n, ast.Dict))
                tables[fn.name] = [(tuple(e.args[0].value for e in k.elts), v.elts[1].args[0].value)
                                   for k, v in zip(table.keys, table.values)]
    return tables


TABLES = dispatch_tables()

# ─── references: torch on float64 (or int64) tensors ───────────────────────────────────────
t = torch


def _directed(mode: str, out: str):
    """A rounding of torch's exact (float64 or integer) value, found with torch.nextafter: for inputs in
    [1, 2) every float32 sum, product and fma of the domain is exact in float64."""
    def rounded(exact: torch.Tensor) -> torch.Tensor:
        dtype = TORCH[out]
        near = exact.to(dtype)
        up = torch.where(near.double() < exact, torch.nextafter(near, torch.tensor(math.inf, dtype=dtype)), near)
        down = torch.where(near.double() > exact, torch.nextafter(near, torch.tensor(-math.inf, dtype=dtype)), near)
        return {"rn": near, "ru": up, "rd": down, "rz": torch.where(exact > 0, down, up)}[mode]
    return rounded


def _jn(n, x):
    n = torch.as_tensor(n).double()  # an integer tensor plus a float would be float32
    total = torch.zeros_like(x)
    for k in range(30):
        total = total + (-1) ** k / (float(math.factorial(k)) * torch.exp(torch.lgamma(n + k + 1.0))) * (x / 2) ** (
            2 * k + n)
    return total


def _yn(n, x):
    out = torch.empty_like(x)
    for i in range(x.numel()):
        order, y0, y1 = int(n[i]), t.special.bessel_y0(x[i]), t.special.bessel_y1(x[i])
        for k in range(1, order):
            y0, y1 = y1, 2 * k / x[i] * y1 - y0
        out[i] = y0 if order == 0 else y1
    return out


def _ieee_remainder(x, y):
    r = torch.fmod(x, y)  # exact; then the nearer multiple (exact too: Sterbenz)
    return torch.where(r.abs() > y.abs() / 2, r - torch.sign(r) * y.abs(), r)


def _bits(x, width, signed):
    v = int(x) & ((1 << width) - 1)
    return v - (1 << width) if signed and v >> (width - 1) else v


def _per_int(fn):
    """fn over Python integers; the values, wrapped to 64 bits (compared at the result's width)."""
    return lambda *xs: torch.from_numpy(np.array(
        [fn(*(int(v) for v in vals)) & (2**64 - 1) for vals in zip(*(x.tolist() for x in xs))],
        dtype=np.uint64).view(np.int64))


UNIT = (0.05, 0.95)
FLOAT_REFERENCES = {
    "abs": (t.abs, [(-5, 5)]), "acos": (t.acos, [(-0.95, 0.95)]), "acosh": (t.acosh, [(1.1, 9)]),
    "asin": (t.asin, [(-0.95, 0.95)]), "asinh": (t.asinh, [(-5, 5)]), "atan": (t.atan, [(-5, 5)]),
    "atanh": (t.atanh, [(-0.9, 0.9)]), "cbrt": (lambda x: t.sign(x) * x.abs() ** (1 / 3), [(-9, 9)]),
    "ceil": (t.ceil, [(-9, 9)]), "cos": (t.cos, [(-3, 3)]), "cosh": (t.cosh, [(-5, 5)]),
    "cospi": (lambda x: t.cos(math.pi * x), [(0.05, 0.45)]), "sinpi": (lambda x: t.sin(math.pi * x), [(0.05, 0.95)]),
    "erf": (t.erf, [(-3, 3)]), "erfc": (t.erfc, [(-2, 3)]), "erfcinv": (lambda x: t.erfinv(1 - x), [(0.05, 0.5)]),
    "erfcx": (t.special.erfcx, [(-1, 5)]), "erfinv": (t.erfinv, [(-0.9, 0.9)]), "exp": (t.exp, [(-9, 9)]),
    "exp10": (lambda x: 10.0 ** x, [(-4, 4)]), "exp2": (t.exp2, [(-9, 9)]), "expm1": (t.expm1, [(-3, 3)]),
    "floor": (t.floor, [(-9, 9)]), "j0": (lambda x: _jn(0, x), [(0.1, 2)]), "j1": (lambda x: _jn(1, x), [(0.1, 3.5)]),
    "y0": (t.special.bessel_y0, [(1.2, 3.5)]), "y1": (t.special.bessel_y1, [(0.3, 2)]),
    "cyl_bessel_i0": (t.special.i0, [(-5, 5)]), "cyl_bessel_i1": (t.special.i1, [(0.1, 5)]),
    "lgamma": (t.lgamma, [(2.5, 10)]), "tgamma": (lambda x: x.apply_(math.gamma), [(0.5, 5)]),
    "log": (t.log, [(0.1, 9)]), "log10": (t.log10, [(0.1, 9)]), "log1p": (t.log1p, [(-0.5, 9)]),
    "log2": (t.log2, [(0.1, 9)]), "logb": (lambda x: (t.frexp(x).exponent - 1).double(), [(-99, 99)]),
    "nearbyint": (t.round, [(-9, 9)]), "rint": (t.round, [(-9, 9)]),
    "round": (lambda x: t.sign(x) * t.floor(x.abs() + 0.5), [(-9, 9)]), "normcdf": (t.special.ndtr, [(-3, 3)]),
    "normcdfinv": (t.special.ndtri, [(0.05, 0.45)]),
    "rcbrt": (lambda x: 1 / (t.sign(x) * x.abs() ** (1 / 3)), [(0.1, 9)]),
    "rsqrt": (t.rsqrt, [(0.1, 9)]), "rsqrt_rn": (t.rsqrt, [(0.1, 9)]), "sin": (t.sin, [(-3, 3)]),
    "sinh": (t.sinh, [(-5, 5)]), "sqrt": (t.sqrt, [(0, 9)]), "tan": (t.tan, [(-1.2, 1.2)]), "tanh": (t.tanh, [(-5, 5)]),
    "trunc": (t.trunc, [(-9, 9)]), "saturatef": (lambda x: t.clamp(x, 0, 1), [(-2, 2)]),
    "rcp64h": (lambda x: ((1 / x).view(t.int64) & -(1 << 32)).view(t.float64), [(0.1, 9)]),
    "fast_cosf": (t.cos, [(-3, 3)]), "fast_sinf": (t.sin, [(-3, 3)]), "fast_tanf": (t.tan, [(-1.2, 1.2)]),
    "fast_expf": (t.exp, [(-9, 9)]), "fast_exp10f": (lambda x: 10.0 ** x, [(-4, 4)]), "fast_logf": (t.log, [(0.1, 9)]),
    "fast_log2f": (t.log2, [(0.1, 9)]), "fast_log10f": (t.log10, [(0.1, 9)]), "fast_tanhf": (t.tanh, [(-5, 5)]),
    "fast_dividef": (t.div, [(-9, 9), (0.5, 9)]), "fast_powf": (t.pow, [(0.1, 4), (-3, 3)]),
    "atan2": (t.atan2, [(-5, 5), (-5, 5)]), "copysign": (t.copysign, [(-5, 5), (-5, 5)]),
    "fdim": (lambda x, y: t.clamp(x - y, min=0), [(-5, 5), (-5, 5)]), "fmod": (t.fmod, [(-9, 9), (0.5, 3)]),
    "hypot": (t.hypot, [(-5, 5), (-5, 5)]), "rhypot": (lambda x, y: 1 / t.hypot(x, y), [(0.5, 5), (0.5, 5)]),
    "remainder": (lambda x, y: _ieee_remainder(x, y), [(-9, 9), (0.5, 3)]),
    "pow": (t.pow, [(0.1, 4), (-3, 3)]), "ldexp": (t.ldexp, [(-5, 5), (-9, 9)]),
    "scalbn": (t.ldexp, [(-5, 5), (-9, 9)]),
    "nextafter": (None, [(-5, 5), (-5, 5)]),
    "fma": (lambda a, b, c: a * b + c, [(1, 2)] * 3),
    "norm3d": (lambda a, b, c: t.sqrt(a * a + b * b + c * c), [(-5, 5)] * 3),
    "rnorm3d": (lambda a, b, c: t.rsqrt(a * a + b * b + c * c), [(0.5, 5)] * 3),
    "norm4d": (lambda a, b, c, d: t.sqrt(a * a + b * b + c * c + d * d), [(-5, 5)] * 4),
    "rnorm4d": (lambda a, b, c, d: t.rsqrt(a * a + b * b + c * c + d * d), [(0.5, 5)] * 4),
    "jn": (_jn, [(0, 3), (0.2, 0.8)]), "yn": (_yn, [(0, 3), (0.2, 0.8)]),
}
EXACT_BASE = {"add": (lambda a, b: a + b, 2), "sub": (lambda a, b: a - b, 2), "mul": (lambda a, b: a * b, 2),
              "div": (None, 2), "fma": (lambda a, b, c: a * b + c, 3), "rcp": (None, 1), "sqrt": (None, 1)}
INTEGER_REFERENCES = {
    "clz": lambda w: _per_int(lambda x: w - (x & ((1 << w) - 1)).bit_length()),
    "popc": lambda w: _per_int(lambda x: bin(x & ((1 << w) - 1)).count("1")),
    "ffs": lambda w: _per_int(lambda x: ((x & ((1 << w) - 1)) & -(x & ((1 << w) - 1))).bit_length()),
    "brev": lambda w: _per_int(lambda x: _bits(int(format(x & ((1 << w) - 1), f"0{w}b")[::-1], 2), w, True)),
    "mulhi": lambda w: _per_int(lambda x, y: (x * y) >> w),
    "hadd": lambda w: _per_int(lambda x, y: (x + y) >> 1), "rhadd": lambda w: _per_int(lambda x, y: (x + y + 1) >> 1),
    "sad": lambda w: _per_int(lambda x, y, z: abs(x - y) + (z & 0xFFFFFFFF)),
    "abs": lambda w: _per_int(abs),
    "byte_perm": lambda w: _per_int(lambda x, y, s: sum(((((x & 0xFFFFFFFF) | ((y & 0xFFFFFFFF) << 32)) >> (
        8 * ((s >> (4 * i)) & 7))) & 0xFF) << (8 * i) for i in range(4))),
}
ULP_ALLOWANCE = {  # functions whose torch reference loses a little in float64 (recurrences, pow of a rounded third)
    "cbrt": 4, "rcbrt": 4, "yn": 64, "jn": 8, "j0": 2, "j1": 2, "tgamma": 4, "erfcinv": 16, "cospi": 16,
    "sinpi": 16, "exp10": 4,
    "fast_exp10f": 4, "lgamma": 8, "cyl_bessel_i0": 4, "cyl_bessel_i1": 4, "erfcx": 8, "erfc": 4, "normcdf": 32,
}
# torch's float64 Bessel Y functions are accurate to about 5e-10 relative (2**21 ulp of float64); their
# float32 variants are held to the 2 ulp bound.
FP64_ULP_ALLOWANCE = {"y0": 2**21, "y1": 2**21, "yn": 2**21}


def cases():
    for name in NAMES:
        for args, out in TABLES.get(name, [((), "")]):
            yield pytest.param(name, args, out, False, id=f"{name}[{','.join(args)}]")
            if "fp32" in args and "fp64" not in args and out in ("fp32", "int32", "int64"):
                for narrow in ("fp16", "bf16"):
                    widened = tuple(narrow if a == "fp32" else a for a in args)
                    yield pytest.param(name, widened, out, True, id=f"{name}[{','.join(widened)}]")


def inputs(name: str, args: tuple, gen: torch.Generator) -> list[torch.Tensor]:
    domains = FLOAT_REFERENCES.get(name, (None, [(-9, 9)] * 4))[1]
    base = name.rpartition("_")[0]
    if base in EXACT_BASE or name.startswith(("double2float", "float2", "double2")):
        domains = [(1, 2)] * 4 if base in EXACT_BASE else [(-900, 900)]
    out = []
    for i, a in enumerate(args):
        if a.startswith(("int", "uint")):
            if name in ("jn", "yn"):
                values = torch.randint(0, 4, (N,), generator=gen)
            elif name in ("ldexp", "scalbn"):
                values = torch.randint(-9, 10, (N,), generator=gen)
            elif name.endswith(("2float_rn", "2float_rz", "2float_rd", "2float_ru", "2double_rn", "2double_rz",
                                "2double_rd", "2double_ru")):
                values = torch.randint(-2**62 if "ll" in name else -2**31, 2**62 if "ll" in name else 2**31, (N,),
                                       generator=gen)
            else:
                values = torch.randint(-2**31, 2**31, (N,), generator=gen, dtype=torch.int64)
            np_type = {"int32": np.int32, "uint32": np.uint32, "int64": np.int64, "uint64": np.uint64}[a]
            out.append(torch.from_numpy(values.numpy().astype(np_type)))
        else:
            lo, hi = domains[min(i, len(domains) - 1)]
            values = torch.rand(N, generator=gen, dtype=torch.float64) * (hi - lo) + lo
            if name in ("isnan", "isinf", "finitef", "isfinited", "signbit", "ilogb"):
                values[:4] = torch.tensor([math.nan, math.inf, -math.inf, -0.0])
            out.append(values.to(TORCH[a]))
    return out


def reference(name: str, args: tuple, out: str, xs: list[torch.Tensor]) -> torch.Tensor:
    wide = [x.double() if x.dtype.is_floating_point else x.to(torch.int64) for x in xs]
    base, _, mode = name.rpartition("_")
    if name in ("isnan", "isinf", "finitef", "isfinited", "signbit"):
        fn = {"isnan": t.isnan, "isinf": t.isinf, "finitef": t.isfinite, "isfinited": t.isfinite, "signbit": t.signbit}
        return fn[name](wide[0]).to(torch.int64)
    if name == "ilogb":
        e = (t.frexp(wide[0].nan_to_num(posinf=1.0, neginf=1.0)).exponent - 1).to(torch.int64)
        e = t.where(wide[0].isnan() | (wide[0] == 0), -(2**31), e)
        return t.where(wide[0].isinf(), 2**31 - 1, e)
    if name in ("llrint", "llround"):
        x = wide[0]
        return (t.round(x) if name == "llrint" else t.sign(x) * t.floor(x.abs() + 0.5)).to(torch.int64)
    if name in ("float_as_int", "float_as_uint", "int_as_float", "uint_as_float", "double_as_longlong",
                "longlong_as_double"):
        return xs[0].view(TORCH[out])
    if name in ("double2hiint", "double2loint"):
        raw = xs[0].view(torch.int64)
        if name == "double2hiint":
            return raw >> 32
        return t.from_numpy((raw.numpy() & 0xFFFFFFFF).astype(np.uint32).view(np.int32).astype(np.int64))
    if name == "hiloint2double":
        hi, lo = xs[0].numpy().astype(np.int64), xs[1].numpy().view(np.uint32).astype(np.int64)
        return t.from_numpy(((hi << 32) | lo).view(np.float64))
    if "2" in base and mode in ("rn", "rz", "rd", "ru") and base.split("2")[1] in ("int", "uint", "ll", "ull"):
        x = wide[0]
        r = {"rn": t.round, "rz": t.trunc, "rd": t.floor, "ru": t.ceil}[mode](x)
        return r.to(torch.int64)
    if "2" in base and mode in ("rn", "rz", "rd", "ru"):  # to float or double: exact integer or double in
        exact = [torch.tensor([float(v)], dtype=torch.float64) for v in xs[0].tolist()]
        values = torch.cat(exact)
        if xs[0].dtype in (torch.int64, torch.uint64):  # not exact in float64: round the integer itself
            return torch.tensor([_round_int(int(v), out, mode) for v in xs[0].tolist()], dtype=TORCH[out])
        return _directed(mode, out)(values)
    if base in EXACT_BASE and mode in ("rn", "rz", "rd", "ru"):
        return _exact_rounding(base, mode, out, wide)
    if name in INTEGER_REFERENCES and not xs[0].dtype.is_floating_point:
        return INTEGER_REFERENCES[name](xs[0].element_size() * 8)(*xs).to(torch.int64)
    if name == "mul24":
        signed = xs[0].dtype == torch.int32
        return _per_int(lambda x, y: (_bits(x, 24, signed) * _bits(y, 24, signed)))(*xs).to(torch.int64)
    if name == "nextafter":
        return torch.nextafter(xs[0], xs[1])
    fn = FLOAT_REFERENCES[name][0]
    return fn(*wide)


def _round_int(v: int, out: str, mode: str) -> float:
    dtype = np.float32 if out == "fp32" else np.float64
    near = dtype(float(v)) if abs(v) < 2**53 else dtype(float(v))
    if int(near) == v:
        return float(near)
    lo = near if int(near) < v else np.nextafter(near, dtype(-np.inf))
    hi = near if int(near) > v else np.nextafter(near, dtype(np.inf))
    if mode == "rd" or (mode == "rz" and v > 0):
        return float(lo)
    if mode == "ru" or (mode == "rz" and v < 0):
        return float(hi)
    return float(near)


def _exact_rounding(base: str, mode: str, out: str, wide: list) -> torch.Tensor:


    dtype = np.float32 if out == "fp32" else np.float64
    values = []
    for vals in zip(*(w.tolist() for w in wide)):
        q = [Fraction(v) for v in vals]
        exact = {"add": lambda: q[0] + q[1], "sub": lambda: q[0] - q[1], "mul": lambda: q[0] * q[1],
                 "div": lambda: q[0] / q[1], "fma": lambda: q[0] * q[1] + q[2], "rcp": lambda: 1 / q[0]}.get(base)
        if exact is not None:
            e = exact()
            c = dtype(float(e))
            lo = c if Fraction(float(c)) <= e else np.nextafter(c, dtype(-np.inf))
            hi = c if Fraction(float(c)) >= e else np.nextafter(c, dtype(np.inf))
        else:  # sqrt: the neighbours whose squares bracket the value
            c = dtype(math.sqrt(vals[0]))
            cands = [np.nextafter(c, dtype(-np.inf)), c, np.nextafter(c, dtype(np.inf))]
            lo = max(r for r in cands if Fraction(float(r)) ** 2 <= q[0])
            hi = min(r for r in cands if Fraction(float(r)) ** 2 >= q[0])
            e = q[0]
            if lo != hi and mode == "rn":
                mid = (Fraction(float(lo)) + Fraction(float(hi))) / 2
                values.append(float(lo if q[0] < mid * mid else hi))
                continue
        if lo == hi:
            values.append(float(lo))
        elif mode in ("rd", "rz"):
            values.append(float(lo))
        elif mode == "ru":
            values.append(float(hi))
        else:
            below, above = e - Fraction(float(lo)), Fraction(float(hi)) - e
            values.append(float(lo if below < above or (below == above and int(np.array([lo]).view(
                np.uint32 if dtype == np.float32 else np.uint64)[0]) % 2 == 0) else hi))
    return torch.tensor(values, dtype=TORCH[out])


def ulp_distance(got: torch.Tensor, want: torch.Tensor) -> int:
    width = {2: torch.int16, 4: torch.int32, 8: torch.int64}[got.element_size()]
    a, b = got.contiguous().view(width).to(torch.int64), want.contiguous().view(width).to(torch.int64)
    top = {2: 0x7FFF, 4: 0x7FFFFFFF, 8: 0x7FFFFFFFFFFFFFFF}[got.element_size()]
    a = torch.where(a < 0, -(a & top), a)
    b = torch.where(b < 0, -(b & top), b)
    both_nan = got.isnan() & want.isnan()
    return int(torch.where(both_nan, 0, (a - b).abs()).max())


def test_every_function_is_mapped_and_referenced():
    assert NAMES, "no libdevice module of the installed Triton was found"
    assert sorted(set(NAMES) - triton_libdevice.NAMES) == [], "libdevice functions gpuemu does not compute"
    known = set(FLOAT_REFERENCES) | set(INTEGER_REFERENCES) | {"mul24"}
    unreferenced = [n for n in NAMES if n not in known and n.rpartition("_")[0] not in EXACT_BASE
                    and "2" not in n and not n.startswith(("is", "finite", "signbit", "ilogb", "ll", "float_as",
                                                            "int_as", "uint_as", "double_as", "longlong_as"))]
    assert unreferenced == [], "add a torch reference for these"


@pytest.mark.parametrize("name, args, out, widen", list(cases()))
def test_libdevice_function_matches_torch(name, args, out, widen):
    gen = torch.Generator().manual_seed(sum(map(ord, name)))
    xs = inputs(name, args, gen)
    narrow = next((TORCH[a] for a in args if a in ("fp16", "bf16")), None)
    result_dtype = narrow if (widen and out == "fp32") else TORCH[out]
    y = torch.empty(N, dtype=result_dtype)
    pad = [torch.ones(N, dtype=xs[0].dtype if not widen else narrow)] * (4 - len(xs))
    module = sys.modules[triton_compat.LIBDEVICE_MODULES[0]] if hasattr(
        sys.modules[triton_compat.LIBDEVICE_MODULES[0]], name) else MODULES[-1]
    apply[(1,)](*xs, *pad, y, N=N, ARITY=len(xs), FN=getattr(module, name), WIDEN=widen)
    want = reference(name, args, out, [x.to(torch.float32) if widen and x.dtype.is_floating_point else x
                                       for x in xs])
    if out.startswith(("int", "uint")):
        mask = (1 << (y.element_size() * 8)) - 1  # both as the result's bit pattern
        if name == "signbit":
            got, want = [int(v) != 0 for v in y.tolist()], [int(v) != 0 for v in want.tolist()]
        else:
            if name.startswith(("float2u", "double2u")):
                want = want.clamp(min=0)  # negative to unsigned: PTX's cvt saturates at 0
            got, want = [int(v) & mask for v in y.tolist()], [int(v) & mask for v in want.tolist()]
        assert got == want, f"{name}{args}: got {got[:6]}, want {want[:6]}"
        return
    if name.rpartition("_")[2] in ("rz", "rd", "ru") or (name.rpartition("_")[0] in EXACT_BASE and "_" in name) or \
            name.startswith(("int2", "uint2", "ll2", "ull2", "double2float", "longlong_as", "int_as", "uint_as")):
        assert ulp_distance(y, want.to(result_dtype)) == 0, f"{name}{args}: {y[:4]} vs {want[:4]}"
        return
    want = want.to(TORCH[out]).to(result_dtype)  # the kernel's fp32 result, then the store's rounding
    bound = 1 if widen else 2 * ULP_ALLOWANCE.get(name, 1)
    if out == "fp64":
        bound = max(bound, FP64_ULP_ALLOWANCE.get(name, 0))
    assert ulp_distance(y, want) <= bound, f"{name}{args}: {y[:4].tolist()} vs {want[:4].tolist()}"
