# The ops of configuration.txt's complete example: each module holds a function named like its op
# (module = "my_project.ops.matmul" runs my_project.ops.matmul:matmul).
