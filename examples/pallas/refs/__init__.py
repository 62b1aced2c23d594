# float64 numpy references for the Pallas examples.
