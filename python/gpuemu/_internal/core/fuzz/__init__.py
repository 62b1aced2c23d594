# The Python mirror of src/fuzz/ (CONTRIBUTING's "fuzz": case generation): cases.py makes a case from
# its seed as src/fuzz/case.cpp and corners.cpp do; generators.py holds the public fuzz generators.
"""gpuemu._internal.core.fuzz: case generation and the fuzz generators of docs/python-api.md."""
