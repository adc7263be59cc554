"""The process skopt starts for a local model: llama-cpp-python's OpenAI-compatible server, plus
a watchdog that ends it as soon as the skopt process that started it is gone — however that
process ended (Ctrl-C, a crash, SIGKILL), no server is left behind.

Usage: python -m skopt.runtime.local.child PARENT_PID [llama_cpp.server arguments...]
"""

from __future__ import annotations

import os
import sys
import threading
import time


def _watch(parent: int) -> None:
    while os.getppid() == parent:  # a child whose parent died is re-parented
        time.sleep(0.25)
    os._exit(0)


def main() -> None:
    parent = int(sys.argv[1])
    sys.argv = ["llama_cpp.server", *sys.argv[2:]]
    threading.Thread(target=_watch, args=(parent,), daemon=True).start()
    from llama_cpp.server.__main__ import main as serve

    serve()  # type: ignore[no-untyped-call]


if __name__ == "__main__":
    main()
