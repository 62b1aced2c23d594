# What crosses a process boundary: daemon messages (docs/protocol.md), warm-worker frames
# (docs/worker-protocol.md), the tensor codec, shared-memory segments and the client's NNG socket.
"""gpuemu._internal.wire: protocol, transport, segments, frames, tensors and the result records of replies.

Importing the package imports none of its modules: frames (standard library only) must stay
importable in a worker before numpy is known to be there.
"""
