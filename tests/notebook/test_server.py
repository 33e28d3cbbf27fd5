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


def test_an_open_that_is_not_a_coroutine_is_left_as_it_is(monkeypatch, caplog):
    """The docstring's promise: a jupyter_server whose `open` is not the coroutine jupyter_server
    2 defines keeps its own, unwrapped, and the server's log says so."""

    def plain(self, kernel_id):
        return "opened"

    monkeypatch.setattr(websocket.KernelWebsocketHandler, "open", plain)
    monkeypatch.delattr(websocket.KernelWebsocketHandler, server._PATCHED, raising=False)
    with caplog.at_level(logging.WARNING, logger="test-server"):
        server._load_jupyter_server_extension(App())
    assert websocket.KernelWebsocketHandler.open is plain
    assert not getattr(websocket.KernelWebsocketHandler, server._PATCHED, False)
    assert "TCP_NODELAY left off" in caplog.text


def test_the_packages_config_file_lists_the_extension_off():
    """The one config file the wheel puts in etc/jupyter/jupyter_server_config.d lists this module
    OFF (`jupyter server extension enable` refuses a module no config file lists); nothing turns
    it on but the user. A real install: test_from_wheel.py."""
    folder = ROOT / "jupyter-config" / "jupyter_server_config.d"
    assert [p.name for p in folder.iterdir()] == [f"{server.__name__}.json"]
    config = json.loads((folder / f"{server.__name__}.json").read_text())
    assert config == {"ServerApp": {"jpserver_extensions": {server.__name__: False}}}
    assert server._jupyter_server_extension_points() == [{"module": server.__name__}]
