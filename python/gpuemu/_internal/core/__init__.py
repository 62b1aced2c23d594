# The Python mirror of gpuemu's C++ core: dtypes, the seeded generator, value and case generation,
# layouts, the pass rule and tolerances, byte for byte or draw for draw the same as src/.
"""gpuemu._internal.core: numpy only, no other gpuemu package (docs/ARCHITECTURE.md, the Python
package's layer table)."""
