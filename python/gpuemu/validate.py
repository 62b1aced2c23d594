# The spelling execution-modes.txt uses (`from gpuemu.validate import validate_op`); the
# implementation lives in gpuemu.validation, as python-api.txt spells it.
"""Alias of gpuemu.validation."""

from gpuemu.validation import ValidationContext, ValidationError, validate_op

__all__ = ["validate_op", "ValidationContext", "ValidationError"]
