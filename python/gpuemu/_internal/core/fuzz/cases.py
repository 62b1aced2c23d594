# Case generation from a case seed in Python, draw for draw the same as src/fuzz/case.cpp and corners.cpp,
# so the client's inline mode (no daemon) makes the very cases the daemon would for the same seed.
"""OpSpec (an [[ops]] table) and generate_case / case_seed / case_params / corners for it."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gpuemu._config_keys import DEFAULTS
from gpuemu._internal.core.dtypes import canonical_dtype
from gpuemu._internal.core.layouts import with_layout
from gpuemu._internal.core.rng import SeededRng, derive_seed
from gpuemu._internal.core.values import generate_tensor
from gpuemu.errors import ClientError
from gpuemu.results import TestCase

__all__ = ["DimSpec", "InputSpec", "OpSpec", "case_params", "case_seed", "case_shapes", "choose_dim", "corner_seed",
           "corners", "declare_output_hint", "generate_case", "is_corner_seed", "run_case_seed", "undeclared_input_shapes"]

# Primes spread over the sizes kernels meet (as src/fuzz/case.cpp); tile bugs hide at sizes coprime
# with the block size.
_PRIMES = (2, 3, 5, 7, 13, 17, 31, 61, 97, 127, 193, 251, 509, 1021, 2039, 4093)


def choose_dim(rng: SeededRng, lo: int, hi: int) -> int:
    """Boundary-aware size in [lo, hi], draw for draw the same as fuzz::choose_dim in C++."""
    if hi <= lo:
        return lo
    if rng.gen_range(0, 10) >= 6:  # 40% uniform over the range, 60% from the boundary set
        return lo + rng.gen_range(0, hi - lo + 1)
    special = {lo, hi}
    if lo <= 1 <= hi:
        special.add(1)
    p = 2
    while p <= hi:
        special.update(v for v in (p - 1, p, p + 1) if lo <= v <= hi)
        p *= 2
    special.update(v for v in _PRIMES if lo <= v <= hi)
    ordered = sorted(special)
    return ordered[rng.gen_range(0, len(ordered))]


_DISTRIBUTIONS = ("regular", "boundary", "adversarial")
DEFAULT_SHAPE = (4, 64)  # config::kDefaultInputShape


@dataclass
class DimSpec:
    name: str
    lo: int = 1
    hi: int = 1
    candidates: list[int] = field(default_factory=list)
    tiles: list[int] = field(default_factory=list)  # [ops.schema] tiles


@dataclass
class InputSpec:
    shape: list | None = None  # ints or dim names
    dtype: str | None = None
    domain: object = (-1.0, 1.0)  # (lo, hi) or "any"


@dataclass
class OpSpec:
    """The parts of an [[ops]] table that case generation and inline validation read."""

    name: str
    reference: str = ""
    dtypes: list[str] = field(default_factory=lambda: ["float32"])
    layouts: list[str] = field(default_factory=lambda: ["contiguous"])
    input_names: list[str] = field(default_factory=lambda: ["x"])
    inputs: dict[str, InputSpec] = field(default_factory=dict)
    dims: list[DimSpec] = field(default_factory=list)
    schema_inputs: dict[str, list] = field(default_factory=dict)
    schema_output: list = field(default_factory=list)  # [ops.schema] output: dim names or sizes
    invariants: list[str] = field(default_factory=list)
    has_schema: bool = False
    kwargs: dict = field(default_factory=dict)
    execution_mode: str = "script_based"

    @classmethod
    def from_toml(cls, table: dict, default_dtypes: list[str]) -> "OpSpec":
        """From a parsed [[ops]] table (the C++ loader has already judged its validity)."""
        op = cls(name=str(table["name"]), reference=str(table.get("reference", "")))
        op.dtypes = [canonical_dtype(d) for d in table.get("dtypes", default_dtypes)]
        op.layouts = list(table.get("layouts", DEFAULTS["ops", "layouts"]))
        op.kwargs = dict(table.get("kwargs", DEFAULTS["ops", "kwargs"]))
        op.execution_mode = str(table.get("execution_mode", DEFAULTS["ops", "execution_mode"]))
        schema = table.get("schema")
        if schema is not None:
            op.has_schema = True
            for name, value in schema.get("dims", {}).items():
                if isinstance(value, dict):
                    cands = [int(c) for c in value["candidates"]]
                    op.dims.append(DimSpec(name, min(cands), max(cands), cands))
                else:
                    op.dims.append(DimSpec(name, int(value[0]), int(value[1])))
            for d in op.dims:
                tiles = schema.get("tiles", {}).get(d.name, [])
                d.tiles = [int(t) for t in (tiles if isinstance(tiles, list) else [tiles])]
            op.schema_inputs = {k: list(v) for k, v in schema.get("inputs", {}).items()}
            op.schema_output = list(schema.get("output", []))
        op.invariants = [str(i) for i in table.get("invariants", DEFAULTS["ops", "invariants"])]
        for name, spec in table.get("inputs", {}).items():
            domain = spec.get("domain", DEFAULTS["ops.inputs.NAME", "domain"])
            op.inputs[name] = InputSpec(spec.get("shape"), spec.get("dtype"),
                                        domain if isinstance(domain, str) else tuple(float(v) for v in domain))
        if "input_names" in table:
            op.input_names = list(table["input_names"])
        elif op.schema_inputs:
            op.input_names = list(op.schema_inputs)
        elif op.inputs:
            op.input_names = list(op.inputs)
        return op


def declared_output(op: OpSpec, inputs: dict) -> tuple[tuple[int, ...], str] | None:
    """(shape, source) every output of a case must have, as OpSession::declare_output_shape: the
    schema's output with the dims read off the inputs, else the first input's under shape_preserved."""
    if op.schema_output:
        dims: dict[str, int] = {}
        for name, refs in op.schema_inputs.items():
            shape = getattr(inputs.get(name), "shape", None)
            if shape is not None and len(shape) == len(refs):
                for ref, size in zip(refs, shape):
                    if isinstance(ref, str):
                        dims.setdefault(ref, int(size))
        if all(isinstance(r, int) or r in dims for r in op.schema_output):
            return tuple(r if isinstance(r, int) else dims[r] for r in op.schema_output), "[ops.schema] output"
        return None
    if "shape_preserved" in op.invariants:
        order = [n for n in op.input_names if n in inputs] or list(inputs)
        if order:
            return tuple(np.shape(inputs[order[0]])), f"the shape of the first input '{order[0]}' (shape_preserved)"
    return None


def declare_output_hint(op: OpSpec, inputs: dict, seen: tuple[int, ...]) -> str:
    """engine::declare_output_hint: under shape_preserved without a schema output, what to declare if the
    reference's shape `seen` is right: `output = [...]` with the inputs' dim names (an op without a
    schema gets the whole [ops.schema] pinning its inputs' present shapes)."""
    shape = "[" + ", ".join(map(str, seen)) + "]"
    dims: list[tuple[str, int]] = []

    def line() -> str:
        items = [next((f'"{n}"' for n, size in dims if size == s), str(s)) for s in seen]
        return "output = [" + ", ".join(items) + "]"

    if op.has_schema:
        for name, refs in op.schema_inputs.items():
            given = np.shape(inputs[name]) if name in inputs else ()
            for k, ref in enumerate(refs):
                if isinstance(ref, str) and k < len(given) and all(n != ref for n, _ in dims):
                    dims.append((ref, int(given[k])))
        return (f"if {shape} is the right shape (op '{op.name}' reduces or reshapes), declare it: add {line()} "
                "under the op's [ops.schema] in gpuemu.toml")
    written = []
    for name in [n for n in op.input_names if n in inputs] or list(inputs):
        refs = []
        for size in np.shape(inputs[name]):
            found = next((n for n, s in dims if s == size), None)
            if found is None:
                found = f"D{len(dims)}"
                dims.append((found, int(size)))
            refs.append(f'"{found}"')
        written.append(f"{name} = [{', '.join(refs)}]")
    pinned = ", ".join(f"{n} = {{ candidates = [{s}] }}" for n, s in dims)
    return (f"if {shape} is the right shape (op '{op.name}' reduces or reshapes), declare it in gpuemu.toml after "
            f"the op's [[ops]] lines:\n[ops.schema]\ndims = {{ {pinned} }}\ninputs = {{ {', '.join(written)} }}\n{line()}")


def case_params(op: OpSpec, seed: int) -> tuple[str, str, str]:
    """(dtype, layout, distribution) of a case: fuzz::case_params."""
    r = SeededRng(derive_seed(seed, "params"))
    dtype = op.dtypes[r.gen_range(0, len(op.dtypes))] if op.dtypes else "float32"
    layout = op.layouts[r.gen_range(0, len(op.layouts))] if op.layouts else "contiguous"
    return dtype, layout, _DISTRIBUTIONS[r.gen_range(0, 3)]


def case_seed(op: OpSpec, master_seed: int, stream: str, index: int, dtype: str | None = None,
              distribution: str | None = None) -> int:
    """The index-th case seed of a stream ("test", "fuzz", ...): fuzz::case_seed with optional dtype and
    value-distribution filters ("mixed" or None: any distribution)."""
    if distribution == "mixed":
        distribution = None
    if distribution is not None and distribution not in _DISTRIBUTIONS:
        raise ValueError(f"value distribution {distribution!r} is not one of {', '.join(_DISTRIBUTIONS)} or mixed")
    seed = 0
    for attempt in range(100000):
        seed = derive_seed(master_seed, f"{stream}/{op.name}/{index}/{attempt}")
        if is_corner_seed(seed):  # would replay as a corner case: draw again, as C++ does
            continue
        params = case_params(op, seed)
        if (dtype is None or params[0] == canonical_dtype(dtype)) and (distribution is None or params[2] == distribution):
            break
    return seed


# fuzz/corners.hpp: a corner's seed is CORNER_TAG << 40 | index << 32 | 32 seeded bits.
CORNER_TAG = 0xC0E4E5
CORNER_OTHER_SIZE = 33
MAX_CORNERS = 256


def _dim_min(d: DimSpec) -> int:
    return min(d.candidates) if d.candidates else d.lo


def _other_size(d: DimSpec) -> int:
    if not d.candidates:
        return min(max(CORNER_OTHER_SIZE, d.lo), d.hi)
    below = [c for c in d.candidates if c <= CORNER_OTHER_SIZE]
    return max(below) if below else min(d.candidates)


def corners(op: OpSpec) -> list[tuple[str, dict[str, int]]]:
    """The op's corner cases in run order, (name, dims): fuzz::corners, name for name."""
    out: list[tuple[str, dict[str, int]]] = []
    if not op.has_schema or not op.dims:
        return out

    def add(what: str, sizes: dict[str, int]) -> None:
        if len(out) < MAX_CORNERS and all(sizes != dims for _, dims in out):
            out.append((f"{what}: " + ", ".join(f"{d.name}={sizes[d.name]}" for d in op.dims), sizes))

    minimum = {d.name: _dim_min(d) for d in op.dims}
    others = {d.name: _other_size(d) for d in op.dims}
    add("every dim at its minimum", dict(minimum))
    for d in op.dims:
        add(f"{d.name} alone at its minimum", {**others, d.name: minimum[d.name]})
        allows_one = 1 in d.candidates if d.candidates else d.lo <= 1 <= d.hi
        if minimum[d.name] != 1 and allows_one:
            add(f"{d.name} alone at 1", {**others, d.name: 1})
    for d in op.dims:
        for tile in d.tiles:
            for offset in (-1, 0, 1):
                size = tile + offset
                if (size in d.candidates) if d.candidates else d.lo <= size <= d.hi:
                    what = f"{d.name} at its tile {tile}" + ("" if offset == 0 else f" {'-' if offset < 0 else '+'} 1")
                    add(what, {**others, d.name: size})
    return out


def is_corner_seed(seed: int) -> bool:
    return seed >> 40 == CORNER_TAG


def corner_seed(op: OpSpec, master_seed: int, stream: str, corner: int, dtype: str | None = None,
                distribution: str | None = None) -> int:
    """The seed of corner `corner` in a stream: fuzz::corner_seed."""
    head = CORNER_TAG << 40 | (corner & 0xFF) << 32
    seed = head
    for attempt in range(100000):
        seed = head | (derive_seed(master_seed, f"corner/{stream}/{op.name}/{corner}/{attempt}") & 0xFFFFFFFF)
        dtype_of, _, distribution_of = case_params(op, seed)
        if (dtype is None or dtype_of == canonical_dtype(dtype)) and distribution in (None, distribution_of):
            break
    return seed


def run_case_seed(op: OpSpec, master_seed: int, stream: str, index: int, dtype: str | None = None,
                  distribution: str | None = None) -> int:
    """The index-th case of a test or fuzz run, corners first: fuzz::run_case_seed."""
    if distribution == "mixed":
        distribution = None
    if index < len(corners(op)):
        return corner_seed(op, master_seed, stream, index, dtype, distribution)
    return case_seed(op, master_seed, stream, index, dtype, distribution)


def _resolve(ref, dims: dict, op: OpSpec, name: str) -> int:
    if isinstance(ref, int):
        return ref
    if ref not in dims:
        raise ValueError(f"op '{op.name}': input '{name}' uses dim '{ref}', which [ops.schema] dims does not "
                         f"declare; add it, e.g. {ref} = [1, 128]")
    return dims[ref]


def case_shapes(op: OpSpec, seed: int) -> dict[str, tuple[int, ...]]:
    """The input shapes of the case of `seed` (its dims draw only; no values are generated)."""
    dims: dict[str, int] = {}
    if is_corner_seed(seed):
        all_corners = corners(op)
        k = seed >> 32 & 0xFF
        if k >= len(all_corners):
            raise ValueError(f"case seed {seed} names corner case {k} of op '{op.name}', which has "
                             f"{len(all_corners)} corner cases: the op's [ops.schema] dims changed since the seed "
                             "was made; rerun test or fuzz")
        dims = dict(all_corners[k][1])
    elif op.has_schema:
        r = SeededRng(derive_seed(seed, "dims"))
        for d in op.dims:
            dims[d.name] = choose_dim(r, d.lo, d.hi) if not d.candidates else d.candidates[r.gen_range(0, len(d.candidates))]
    shapes: dict[str, tuple[int, ...]] = {}
    for name in op.input_names:
        spec = op.inputs.get(name)
        refs = op.schema_inputs.get(name) if op.has_schema else None
        if refs is None and spec is not None and spec.shape:
            refs = spec.shape
        shapes[name] = tuple(_resolve(r, dims, op, name) for r in refs) if refs is not None else DEFAULT_SHAPE
    return shapes


def undeclared_input_shapes(op: OpSpec) -> str | None:
    """config::undeclared_input_shapes: for an op without [ops.schema] whose two or more inputs declare
    no shape (all would be DEFAULT_SHAPE, which a matmul's inputs cannot both be), the error naming
    [ops.schema] and the lines to write; None for every other op."""
    if op.has_schema or len(op.input_names) < 2:
        return None
    if any(op.inputs.get(n) is not None and op.inputs[n].shape for n in op.input_names):
        return None
    names = ["M", "K", "N"] if len(op.input_names) == 2 else [f"D{k}" for k in range(len(op.input_names) + 1)]
    largest = DEFAULT_SHAPE[-1]
    shape = "[" + ", ".join(map(str, DEFAULT_SHAPE)) + "]"
    dims = ", ".join(f"{d} = [1, {largest}]" for d in names)
    inputs = ", ".join(f'{n} = ["{names[k]}", "{names[k + 1]}"]' for k, n in enumerate(op.input_names))
    schema = f'[ops.schema]\ndims = {{ {dims} }}\ninputs = {{ {inputs} }}\noutput = ["{names[0]}", "{names[-1]}"]'
    return (f"op '{op.name}' has no [ops.schema], so each of its inputs ({', '.join(op.input_names)}) takes the "
            f"default shape {shape}; inputs whose shapes must agree, such as a matmul's, cannot run on them\n"
            f"hint: declare the shapes in gpuemu.toml after the op's [[ops]] lines; for a matmul:\n{schema}\n"
            f"(a dim named in two inputs has one size in both). If the inputs do share one shape, declare it for "
            f"each instead ([ops.inputs.{op.input_names[0]}] shape = {shape}); a client may also send its own "
            'op_schema. See docs/configuration.md, "Default input shape".')


def generate_case(op: OpSpec, seed: int) -> TestCase:
    """The case of `seed`: same dims, dtype, layout and input bits as fuzz::generate_case."""
    problem = undeclared_input_shapes(op)
    if problem is not None:
        raise ClientError(problem)
    dtype, layout, distribution = case_params(op, seed)
    shapes = case_shapes(op, seed)
    inputs: dict[str, np.ndarray] = {}
    for name in op.input_names:
        spec = op.inputs.get(name)
        shape = shapes[name]
        in_dtype = canonical_dtype(spec.dtype) if spec is not None and spec.dtype else dtype
        domain = spec.domain if spec is not None else (-1.0, 1.0)
        values = generate_tensor(derive_seed(seed, f"input/{name}"), in_dtype, shape, domain, distribution)
        inputs[name] = with_layout(values, layout)
    first = op.input_names[0] if op.input_names else ""
    main_shape = tuple(inputs[first].shape) if first else ()
    return TestCase(seed=seed, shape=main_shape, dtype=dtype, layout=layout, inputs=inputs,
                    distribution=distribution, op_name=op.name)
