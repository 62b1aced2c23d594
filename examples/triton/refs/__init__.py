# float64 numpy references for the Triton examples.
