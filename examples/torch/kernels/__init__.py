# Kernels written in torch ops, a correct one beside one with a dtype bug (README.md).
