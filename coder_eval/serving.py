"""A ``socketserver`` server served in a thread of its own, and stopped at once.

Example::

    serving = Serving(ThreadingHTTPServer(("127.0.0.1", 0), Handler), name="scripted-server")
    ...                      # requests are answered in the background
    serving.stop()           # the loop has ended and the socket is closed when this returns

``serve_forever`` notices ``shutdown()`` only at its next poll: every stop waited half a poll
interval on average (25 ms at 0.05 s, on each episode's scripted server and API proxy). This loop
waits on the server's socket and on a wake-up socket, with no timer, so ``stop`` ends it the moment
it is called.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import socketserver
import threading


class Serving:
    """``server`` answering in a daemon thread named ``name`` until :meth:`stop`."""

    def __init__(self, server: socketserver.TCPServer, name: str) -> None:
        self.server = server
        server.timeout = 0  # handle_request never waits: the loop below calls it only when one is ready
        self._wake, self._waker = socket.socketpair()
        self._stopping = False
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(self.server, selectors.EVENT_READ, data="server")
            selector.register(self._wake, selectors.EVENT_READ, data="wake")
            while not self._stopping:
                ready = selector.select()
                if not self._stopping and any(key.data == "server" for key, _ in ready):
                    self.server.handle_request()

    def stop(self, timeout: float = 5.0) -> None:
        """End the loop (a request being answered goes on in its own thread) and close the socket."""
        self._stopping = True
        with contextlib.suppress(OSError):
            self._waker.send(b"\0")
        self._thread.join(timeout)
        self.server.server_close()
        for end in (self._wake, self._waker):
            end.close()
