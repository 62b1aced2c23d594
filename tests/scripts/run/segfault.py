# Test script: dies of SIGSEGV.
import os
os.kill(os.getpid(), 11)
