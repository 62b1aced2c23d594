# Test module: fails to import.
import module_that_does_not_exist  # noqa: F401
