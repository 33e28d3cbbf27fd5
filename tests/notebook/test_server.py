"""The package's Jupyter server extension, without a server: it wraps the kernel websocket's
`open` once, turning TCP_NODELAY on before jupyter_server's own `open` runs. The real server,
the real socket and the option read back from it: tests/notebook/test_jupyterlab.py."""

from __future__ import annotations

import json
import logging
import socket

import pytest

from allreduce_explainer.notebook import server
from helpers import ROOT

websocket = pytest.importorskip("jupyter_server.services.kernels.websocket")


class App:
    log = logging.getLogger("test-server")


class Handler:
    """What the wrapper touches of a Tornado websocket handler: set_nodelay, and the socket."""

    def __init__(self, sock: socket.socket):
        self.calls: list[object] = []
        self.ws_connection = type("Conn", (), {"stream": type("S", (), {"socket": sock})()})()
        self._sock = sock

    def set_nodelay(self, value: bool) -> None:
        self.calls.append(("nodelay", value))
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, int(value))


def finished(coroutine):
    """The coroutine run to its end on this thread: it awaits nothing that needs a loop (the
    suite's browser tests may have left one running, where asyncio.run refuses)."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    raise AssertionError("the coroutine waited on something")


def test_open_sets_nodelay_first_then_runs_jupyter_servers_open(monkeypatch):
    async def original(self, kernel_id):
        self.calls.append(("open", kernel_id))
        return "opened"

    monkeypatch.setattr(websocket.KernelWebsocketHandler, "open", original)
    monkeypatch.delattr(websocket.KernelWebsocketHandler, server._PATCHED, raising=False)
    server._load_jupyter_server_extension(App())
    server._load_jupyter_server_extension(App())  # a second load wraps nothing twice
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 0  # Nagle on by default
        h = Handler(sock)
        got = finished(websocket.KernelWebsocketHandler.open(h, "k1"))
        assert got == "opened" and h.calls == [("nodelay", True), ("open", "k1")]
        assert server.nodelay(h) != 0


def test_the_install_turns_the_extension_on():
    """The config file the wheel puts in etc/jupyter/jupyter_server_config.d names this module."""
    config = ROOT / "jupyter-config" / "jupyter_server_config.d" / "allreduce_explainer.json"
    extensions = json.loads(config.read_text())["ServerApp"]["jpserver_extensions"]
    assert extensions == {server.__name__: True}
    assert server._jupyter_server_extension_points() == [{"module": server.__name__}]
