# Reference of execution-modes.txt's my_matmul (daemon-orchestrated mode): a @ b in float64, over
# the documents' stdin/stdout protocol.
from _doc_protocol import serve

if __name__ == "__main__":
    serve(lambda a, b: a @ b)
