"""The served app in a child process: uvicorn with the arguments of `make run`, for the tests
that need the real server (proxy headers, streaming, a database that does not answer)."""

import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    """A loopback port nobody listens on (also useful as a dead database's port)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_args(port: int) -> list[str]:
    """The uvicorn arguments of `make run`, as the Makefile writes them."""
    makefile = (ROOT / "Makefile").read_text()
    line = re.search(r"/uvicorn (config\.asgi:application[^\n]*)", makefile).group(1)
    return line.replace("$(PORT)", str(port)).split()


@contextmanager
def served(
    env: dict, *extra_args: str, ready: str = "/api/v1/status", output=None
) -> Iterator[str]:
    """Run the app with `env` over this process's environment; yields its base URL.
    `output`: where the server's stdout and stderr go (default: nowhere)."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", *serve_args(port), *extra_args],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=output or subprocess.DEVNULL,
        stderr=subprocess.STDOUT if output else subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(150):
            try:
                httpx.get(base + ready, timeout=5)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        yield base
    finally:
        server.terminate()
        server.wait(10)


class Relay:
    """A TCP relay on a loopback port to `port` (a database's); `cut()` closes it and every
    connection through it: a database host that stopped answering, for a served app."""

    def __init__(self, port: int):
        self.target = ("127.0.0.1", port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:  # cut
                return
            upstream = socket.create_connection(self.target)
            self.sockets += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def cut(self) -> None:
        for end in (self.listener, *self.sockets):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            end.close()
