# The Python client (docs/python-api.md): the daemon's requests as Client methods, the inline mode
# that validates without a daemon, and the client-side runs of a user's op under guard.
"""gpuemu._internal.client: Client, validate_op and what runs ops on the client side.

    client.py         Client: one method per request of docs/protocol.md, inline when no daemon runs
    inline.py         InlineProject: gpuemu.toml's ops, tolerances and references without a daemon
    run_cases.py      the client-side fuzz loop and the cases it runs (from the daemon or inline)
    minimize.py       shrinking a failure whose op runs only on the client
    guard.py          run_guarded: an op that writes into or aliases its inputs fails
    repro.py          ReproductionInfo for a case the client held
    validate.py       the validate_op context manager
    seeded_fuzzer.py  SeededFuzzer: reproducible cases and an op run on them, no daemon
"""

from gpuemu._internal.client.client import Client
from gpuemu._internal.client.validate import validate_op

__all__ = ["Client", "validate_op"]
