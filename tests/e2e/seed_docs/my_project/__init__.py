# The package configuration.txt's complete example names (my_project.ops.*, my_project.refs): small,
# correct ops in PyTorch ([project] framework = "pytorch") for the seed-document tests.
