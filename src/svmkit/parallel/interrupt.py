"""Ctrl-C for compiled loops that run in the main thread without the GIL: Python runs its
SIGINT handler only between bytecodes, which a long compiled loop never reaches. While such a
loop runs, Python's signal wake-up file descriptor (written by its C-level handler at once) is
pointed at a socket that a watching thread reads; on SIGINT it sets the stop flag the loop polls.
The loop returns, and Python's own handler then raises KeyboardInterrupt."""

from __future__ import annotations

import atexit
import contextlib
import signal
import socket
import threading

import numpy as np

#: The socket the wake-up descriptor writes to, once the watching thread has started.
_writer = None
#: The stop flag of the loop running in the main thread (None: none runs).
_running = [None]


def _watch(reader: socket.socket) -> None:
    """Set the running loop's stop flag on each SIGINT; end when the writer closes (at exit)."""
    with reader:
        while data := reader.recv(64):
            if signal.SIGINT in data and _running[0] is not None:
                _running[0][0] = 1


@contextlib.contextmanager
def stop_on_ctrl_c():
    """A one-element uint8 array for a compiled loop to poll: a Ctrl-C while the body runs in
    the main thread sets it, when SIGINT raises KeyboardInterrupt there (Python's default), so
    that the interrupted result is never returned. Elsewhere it stays 0."""
    global _writer
    stop = np.zeros(1, dtype=np.uint8)
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield stop
        return
    if _writer is None:
        reader, _writer = socket.socketpair()
        _writer.setblocking(False)
        atexit.register(_writer.close)
        threading.Thread(target=_watch, args=(reader,), name="svmkit-ctrl-c", daemon=True).start()
    previous = signal.set_wakeup_fd(_writer.fileno(), warn_on_full_buffer=False)
    _running[0] = stop
    try:
        yield stop
    finally:
        _running[0] = None
        signal.set_wakeup_fd(previous)
