# float64 numpy references for the torch examples.
