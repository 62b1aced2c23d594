# numpy versions of Triton's libdevice functions (triton.language.extra[.cuda|.hip].libdevice), which
# Triton's CPU interpreter leaves as stubs; triton_compat calls them with the compiler's own dtype rules.
"""libdevice, computed on a CPU.

The compiler's dispatch table (each libdevice function's ``extern_elementwise`` dict) has already
chosen the argument and result types when :func:`evaluate` runs, so this module only computes
values: in float64 (or exactly, with ``fractions.Fraction``, where a rounding mode is named) and
rounded once to the result type. Results are correctly rounded where libdevice promises an error
bound of a few ulp, so they lie within that bound of a GPU's (docs/frameworks.md, "What the interpreter
gets wrong").
Functions named ``fast_*`` compute the precise value: a GPU's approximation lies within its
documented error of it.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable

import numpy as np

__all__ = ["evaluate", "mapped", "NAMES"]

_MODES = ("rn", "rz", "rd", "ru")


def _f64(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def _scipy_special():
    # lazy: scipy is imported only by a kernel that calls a Bessel, gamma or inverse-erf function.
    import scipy.special

    return scipy.special


def _round_fraction(q: Fraction, dtype: np.dtype, mode: str):
    """q rounded to dtype (float32 or float64) in rounding mode `mode`, exactly."""
    ftype = dtype.type
    info = np.finfo(dtype)
    try:
        c = ftype(float(q))
    except OverflowError:
        c = ftype(math.inf if q > 0 else -math.inf)
    if np.isinf(c):
        big = ftype(info.max)
        if mode == "rn":
            return c
        if mode == "rz":
            return big if q > 0 else -big
        if mode == "ru":
            return c if q > 0 else -big
        return big if q > 0 else c
    exact = Fraction(float(c))
    if exact == q:
        return c
    if exact > q:
        hi, lo = c, np.nextafter(c, ftype(-math.inf))
    else:
        lo, hi = c, np.nextafter(c, ftype(math.inf))
    if mode == "rd":
        return lo
    if mode == "ru":
        return hi
    if mode == "rz":
        return lo if q > 0 else hi
    below, above = q - Fraction(float(lo)), Fraction(float(hi)) - q
    if below != above:
        return lo if below < above else hi
    bits = np.array([lo]).view(np.uint32 if dtype == np.float32 else np.uint64)[0]
    return lo if int(bits) % 2 == 0 else hi


def _exact(fn: Callable, mode: str, out: np.dtype, *args: np.ndarray) -> np.ndarray:
    """fn over exact Fractions of the finite elements, rounded in `mode`; NaN and infinity as float64."""
    args = np.broadcast_arrays(*args)
    with np.errstate(all="ignore"):
        fallback = fn(*(_f64(a) for a in args)).astype(out)
    result = np.empty(args[0].shape, dtype=out)
    for index in np.ndindex(args[0].shape):
        values = [a[index] for a in args]
        if not all(np.isfinite(v) for v in values):
            result[index] = fallback[index]
            continue
        try:
            q = fn(*(Fraction(int(v)) if np.issubdtype(type(v), np.integer) else Fraction(float(v)) for v in values))
        except ZeroDivisionError:
            result[index] = fallback[index]
            continue
        result[index] = _round_fraction(q, np.dtype(out), mode)
    return result


def _to_int(x: np.ndarray, mode: str, out: np.dtype, unsigned: bool, bits: int) -> np.ndarray:
    """A float to an integer in `mode`, saturating at the integer range as PTX's cvt does (NaN gives 0)."""
    x = _f64(x)
    rounded = {"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil}[mode](x)
    lo, hi = (0, 2**bits - 1) if unsigned else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    values = [0 if math.isnan(v) else int(min(max(v, lo), hi)) if math.isfinite(v) else (hi if v > 0 else lo)
              for v in rounded.ravel()]
    wide = np.array(values, dtype=np.uint64 if unsigned else np.int64).reshape(x.shape)
    if np.dtype(out).itemsize * 8 == bits:  # e.g. float2uint: the unsigned value in the signed result type
        return wide.astype(np.dtype(f"{'u' if unsigned else ''}int{bits}")).view(out)
    return wide.astype(out)


def _ints(x: np.ndarray) -> list[int]:
    return [int(v) for v in np.asarray(x).ravel()]


def _per_int(fn: Callable, out: np.dtype, *args: np.ndarray) -> np.ndarray:
    args = np.broadcast_arrays(*args)
    flat = [_ints(a) for a in args]
    bits = np.dtype(out).itemsize * 8
    values = [fn(*vals) & ((1 << bits) - 1) for vals in zip(*flat)]
    unsigned = np.array(values, dtype=np.uint64).astype(np.dtype(f"uint{bits}"))
    return unsigned.view(out).reshape(args[0].shape)


def _unsigned(v: int, bits: int) -> int:
    return v & ((1 << bits) - 1)


def _signed(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def _width(a: np.ndarray) -> int:
    return a.dtype.itemsize * 8


def _clz(a: np.ndarray, out: np.dtype) -> np.ndarray:
    bits = _width(a)
    return np.array([bits - _unsigned(v, bits).bit_length() for v in _ints(a)], dtype=out).reshape(a.shape)


def _ffs(a: np.ndarray, out: np.dtype) -> np.ndarray:
    bits = _width(a)
    return np.array([(_unsigned(v, bits) & -_unsigned(v, bits)).bit_length() for v in _ints(a)],
                    dtype=out).reshape(a.shape)


def _brev(a: np.ndarray, out: np.dtype) -> np.ndarray:
    bits = _width(a)
    return _per_int(lambda v: int(format(_unsigned(v, bits), f"0{bits}b")[::-1], 2), out, a)


def _mulhi(a: np.ndarray, b: np.ndarray, out: np.dtype) -> np.ndarray:
    bits = _width(a)
    return _per_int(lambda x, y: (x * y) >> bits, out, a, b)


def _mul24(a: np.ndarray, b: np.ndarray, out: np.dtype) -> np.ndarray:
    signed = np.issubdtype(a.dtype, np.signedinteger)
    low = (lambda v: _signed(v, 24)) if signed else (lambda v: _unsigned(v, 24))
    return _per_int(lambda x, y: low(x) * low(y), out, a, b)


def _byte_perm(x: np.ndarray, y: np.ndarray, s: np.ndarray, out: np.dtype) -> np.ndarray:
    def perm(xv: int, yv: int, sv: int) -> int:
        pool = _unsigned(xv, 32) | (_unsigned(yv, 32) << 32)
        return sum(((pool >> (8 * ((sv >> (4 * i)) & 7))) & 0xFF) << (8 * i) for i in range(4))

    return _per_int(perm, out, x, y, s)


def _sad(x: np.ndarray, y: np.ndarray, z: np.ndarray, out: np.dtype) -> np.ndarray:
    return _per_int(lambda a, b, c: abs(a - b) + _unsigned(c, 32), out, x, y, z)


def _round_half_away(x: np.ndarray) -> np.ndarray:
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)


def _pi_scaled(fn: Callable) -> Callable:
    """sinpi/cospi: the argument reduced modulo 2 exactly before multiplying by pi."""
    return lambda x: fn(np.pi * np.fmod(x, 2.0))


def _logb(x: np.ndarray) -> np.ndarray:
    mant, exp = np.frexp(x)
    out = (exp - 1).astype(np.float64)
    out = np.where(x == 0, -np.inf, out)
    return np.where(np.isfinite(x), out, np.abs(x))


def _ilogb(x: np.ndarray) -> np.ndarray:
    _, exp = np.frexp(np.where(np.isfinite(x), x, 1.0))
    int_min, int_max = -(2**31), 2**31 - 1
    out = (exp - 1).astype(np.int64)
    out = np.where((x == 0) | np.isnan(x), int_min, out)
    return np.where(np.isinf(x), int_max, out)


def _rcp64h(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        bits = (1.0 / _f64(x)).view(np.uint64)
    return (bits & np.uint64(0xFFFFFFFF00000000)).view(np.float64)


def _saturate(x: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(x), 0.0, np.clip(x, 0.0, 1.0))


def _special(name: str) -> Callable:
    return lambda *xs: getattr(_scipy_special(), name)(*xs)


# Unary and n-ary float functions: computed in float64, rounded once to the result type.
_FLOAT: dict[str, Callable] = {
    "abs": np.abs, "acos": np.arccos, "acosh": np.arccosh, "asin": np.arcsin, "asinh": np.arcsinh,
    "atan": np.arctan, "atanh": np.arctanh, "cbrt": np.cbrt, "ceil": np.ceil, "cos": np.cos, "cosh": np.cosh,
    "cospi": _pi_scaled(np.cos), "sinpi": _pi_scaled(np.sin), "erf": _special("erf"), "erfc": _special("erfc"),
    "erfcinv": _special("erfcinv"), "erfcx": _special("erfcx"), "erfinv": _special("erfinv"), "exp": np.exp,
    "exp10": lambda x: np.power(10.0, x), "exp2": np.exp2, "expm1": np.expm1, "floor": np.floor,
    "j0": _special("j0"), "j1": _special("j1"), "y0": _special("y0"), "y1": _special("y1"),
    "cyl_bessel_i0": _special("i0"), "cyl_bessel_i1": _special("i1"), "lgamma": _special("gammaln"),
    "tgamma": _special("gamma"), "log": np.log, "log10": np.log10, "log1p": np.log1p, "log2": np.log2,
    "logb": _logb, "nearbyint": np.rint, "rint": np.rint, "round": _round_half_away, "normcdf": _special("ndtr"),
    "normcdfinv": _special("ndtri"), "rcbrt": lambda x: 1.0 / np.cbrt(x), "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "rsqrt_rn": lambda x: 1.0 / np.sqrt(x), "sin": np.sin, "sinh": np.sinh, "sqrt": np.sqrt, "tan": np.tan,
    "tanh": np.tanh, "trunc": np.trunc, "saturatef": _saturate, "rcp64h": _rcp64h,
    "fast_cosf": np.cos, "fast_sinf": np.sin, "fast_tanf": np.tan, "fast_expf": np.exp,
    "fast_exp10f": lambda x: np.power(10.0, x), "fast_logf": np.log, "fast_log2f": np.log2,
    "fast_log10f": np.log10, "fast_tanhf": np.tanh, "fast_dividef": np.divide, "fast_powf": np.power,
    "atan2": np.arctan2, "copysign": np.copysign, "fdim": lambda x, y: np.where(x > y, x - y, np.where(
        np.isnan(x) | np.isnan(y), np.nan, 0.0)), "fmod": np.fmod, "hypot": np.hypot,
    "rhypot": lambda x, y: 1.0 / np.hypot(x, y), "remainder": np.vectorize(math.remainder, otypes=[np.float64]),
    "pow": np.power, "ldexp": lambda x, e: np.ldexp(x, e.astype(np.int32)),
    "scalbn": lambda x, e: np.ldexp(x, e.astype(np.int32)), "fma": lambda a, b, c: a * b + c,
    "norm3d": lambda a, b, c: np.sqrt(a * a + b * b + c * c),
    "rnorm3d": lambda a, b, c: 1.0 / np.sqrt(a * a + b * b + c * c),
    "norm4d": lambda a, b, c, d: np.sqrt(a * a + b * b + c * c + d * d),
    "rnorm4d": lambda a, b, c, d: 1.0 / np.sqrt(a * a + b * b + c * c + d * d),
    "jn": lambda n, x: _scipy_special().jv(n, x), "yn": lambda n, x: _scipy_special().yn(n, x),
}

# Functions whose float64 evaluation is not one rounding away from the exact result: computed exactly.
_EXACT_BASE: dict[str, Callable] = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
    "fma": lambda a, b, c: a * b + c, "rcp": lambda a: 1 / a,
}


def _sqrt_rounded(x: np.ndarray, mode: str, out: np.dtype) -> np.ndarray:
    with np.errstate(all="ignore"):
        approx = np.sqrt(_f64(x)).astype(out)
    result = approx.copy()
    for index in np.ndindex(x.shape):
        v = float(x[index])
        if not math.isfinite(v) or v <= 0:
            continue
        q = Fraction(v)
        c = approx[index]
        candidates = [np.nextafter(c, np.array(-np.inf, dtype=out)), c, np.nextafter(c, np.array(np.inf, dtype=out))]
        below = [r for r in candidates if Fraction(float(r)) ** 2 <= q]
        above = [r for r in candidates if Fraction(float(r)) ** 2 >= q]
        lo, hi = max(below), min(above)
        if lo == hi or mode == "rd" or mode == "rz":
            result[index] = lo
        elif mode == "ru":
            result[index] = hi
        else:  # nearest: compare q with the midpoint's square (no tie: a square root is never a midpoint)
            mid = (Fraction(float(lo)) + Fraction(float(hi))) / 2
            result[index] = lo if q < mid * mid else hi
    return result


def _convert(name: str, args: list, out: np.dtype):
    """double2float_rz, float2int_rd, ll2double_ru, ...: conversions with a rounding mode."""
    base, mode = name.rsplit("_", 1)
    source, target = base.split("2")
    if target in ("float", "double"):
        return _exact(lambda a: a, mode, np.dtype(np.float32 if target == "float" else np.float64), args[0]).astype(out)
    bits = {"int": 32, "uint": 32, "ll": 64, "ull": 64}[target]
    return _to_int(args[0], mode, out, target.startswith("u"), bits)


def _bits(name: str, args: list, out: np.dtype):
    a = args[0]
    if name in ("float_as_int", "float_as_uint", "int_as_float", "uint_as_float", "double_as_longlong",
                "longlong_as_double"):
        return np.ascontiguousarray(a).view(out)
    raw = np.ascontiguousarray(a, dtype=np.float64).view(np.uint64)
    if name == "double2hiint":
        return (raw >> np.uint64(32)).astype(np.uint32).view(out)
    if name == "double2loint":
        return (raw & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(out)
    hi, lo = np.broadcast_arrays(args[0], args[1])  # hiloint2double
    joined = (hi.astype(np.int64).astype(np.uint64) << np.uint64(32)) | lo.view(np.uint32).astype(np.uint64)
    return joined.view(np.float64).astype(out)


def _integer(name: str, args: list, out: np.dtype):
    if name == "clz":
        return _clz(args[0], out)
    if name == "ffs":
        return _ffs(args[0], out)
    if name == "popc":
        # numpy counts a signed integer's absolute value: count the two's complement pattern instead
        return np.bitwise_count(args[0].view(np.dtype(f"uint{_width(args[0])}"))).astype(out)
    if name == "brev":
        return _brev(args[0], out)
    if name == "mulhi":
        return _mulhi(args[0], args[1], out)
    if name == "mul24":
        return _mul24(args[0], args[1], out)
    if name == "hadd":
        return _per_int(lambda x, y: (x + y) >> 1, out, args[0], args[1])
    if name == "rhadd":
        return _per_int(lambda x, y: (x + y + 1) >> 1, out, args[0], args[1])
    if name == "byte_perm":
        return _byte_perm(*args, out)
    if name == "sad":
        return _sad(*args, out)
    if name == "abs":
        return _per_int(abs, out, args[0])
    raise KeyError(name)


_INTEGER = ("clz", "ffs", "popc", "brev", "mulhi", "mul24", "hadd", "rhadd", "byte_perm", "sad")
_PREDICATES = {"isnan": np.isnan, "isinf": np.isinf, "finitef": np.isfinite, "isfinited": np.isfinite,
               "signbit": np.signbit}
_BIT_CASTS = ("float_as_int", "float_as_uint", "int_as_float", "uint_as_float", "double_as_longlong",
              "longlong_as_double", "double2hiint", "double2loint", "hiloint2double")
_CONVERSIONS = {f"{s}2{t}_{m}" for s in ("float", "double") for t in ("int", "uint", "ll", "ull") for m in _MODES} | \
    {f"{s}2{t}_{m}" for s in ("int", "uint", "ll", "ull") for t in ("float", "double") for m in _MODES} | \
    {f"double2float_{m}" for m in _MODES}

NAMES = frozenset(_FLOAT) | frozenset(_INTEGER) | frozenset(_PREDICATES) | frozenset(_BIT_CASTS) | _CONVERSIONS | \
    {f"{op}_{m}" for op in ("add", "sub", "mul", "div", "fma", "rcp", "sqrt") for m in _MODES} | \
    {"ilogb", "llrint", "llround", "nextafter"}


def mapped(name: str) -> bool:
    """Whether :func:`evaluate` computes libdevice function `name`."""
    return name in NAMES


def evaluate(name: str, args: list, out: np.dtype) -> np.ndarray:
    """libdevice function `name` of numpy arrays `args` (the types its dispatch table chose), as `out`.
    KeyError when the function is not mapped."""
    out = np.dtype(out)
    with np.errstate(all="ignore"):
        if name == "abs" and np.issubdtype(args[0].dtype, np.integer):
            return _integer(name, args, out)
        if name in _INTEGER:
            return _integer(name, args, out)
        if name in _PREDICATES:
            return _PREDICATES[name](args[0]).astype(out)
        if name in _BIT_CASTS:
            return _bits(name, args, out)
        if name in _CONVERSIONS:
            return _convert(name, args, out)
        if name == "ilogb":
            return _ilogb(_f64(args[0])).astype(out)
        if name == "llrint":
            return _to_int(args[0], "rn", out, False, 64)
        if name == "llround":
            return _to_int(_round_half_away(_f64(args[0])), "rz", out, False, 64)
        if name == "nextafter":
            return np.nextafter(args[0], args[1]).astype(out)
        base, _, mode = name.rpartition("_")
        if mode in _MODES and base == "sqrt":
            return _sqrt_rounded(args[0], mode, out)
        if mode in _MODES and base in _EXACT_BASE:
            if mode == "rn" and base != "fma":  # correctly rounded in float64; float32 inputs: exact once more
                return _EXACT_BASE[base](*(_f64(a) for a in args)).astype(out)
            return _exact(_EXACT_BASE[base], mode, out, *args)
        if name == "fma":
            return _exact(_EXACT_BASE["fma"], "rn", out, *args)
        fn = _FLOAT[name]
        return np.asarray(fn(*(a if np.issubdtype(a.dtype, np.integer) else _f64(a) for a in args))).astype(out)
