# `from gpuemu.validation import validate_op`: one of the two module spellings docs/python-api.md
# promises for validate_op (the other is gpuemu.validate); both name gpuemu.client.validate.
"""Alias of gpuemu.client.validate."""

from gpuemu.client.validate import ValidationContext, ValidationError, validate_op

__all__ = ["validate_op", "ValidationContext", "ValidationError"]
