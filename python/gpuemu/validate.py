# `from gpuemu.validate import validate_op`: one of the two module spellings docs/python-api.md
# promises for validate_op (the other is gpuemu.validation); both name gpuemu._internal.client.validate.
"""Alias of gpuemu._internal.client.validate."""

from gpuemu._internal.client.validate import ValidationContext, ValidationError, validate_op

__all__ = ["validate_op", "ValidationContext", "ValidationError"]
