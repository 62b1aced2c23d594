# A Pallas kernel, correct and with a grid bug, run with interpret=True on a CPU (README.md).
