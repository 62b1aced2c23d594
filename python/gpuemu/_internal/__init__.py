# The implementation of the gpuemu package: nothing here is public API. Users import the names
# docs/python-api.md lists (from gpuemu, gpuemu.script, gpuemu.frameworks, gpuemu.testing, ...).
"""gpuemu._internal: the client, the Python mirror of the C++ core, the wire codecs and loaders.

    core/       numpy mirror of src/rng, src/tensor, src/fuzz, src/check (pinned by tests/vectors/)
    wire/       what crosses a process boundary: daemon messages, worker frames, tensors, segments
    client/     Client, inline mode, client-side runs under guard, validate_op, SeededFuzzer
    loading     a `module:function` or a persistent script as a Python function
    runtime     what ran a case, the Triton/Pallas interpreter switches
    moved       the old module paths (gpuemu.core, gpuemu.wire, gpuemu.client) as aliases
"""
