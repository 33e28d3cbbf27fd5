"""A Jupyter server extension, off unless you turn it on: the kernel's websocket writes each
message as it is made (TCP_NODELAY), so a widget's answer reaches the page without waiting on the
browser's delayed acknowledgement. Installing the package changes no Jupyter server: the wheel's
one config file (jupyter-config/) lists the extension off, as `jupyter server extension enable`
needs it listed. One line turns it on for the servers of the environment it is run in (its
`sys.prefix`), one turns it off:

    jupyter server extension enable allreduce_explainer.notebook.server
    jupyter server extension disable allreduce_explainer.notebook.server

Once on, it applies to every kernel websocket that server opens, whatever the kernel's language:
jupyter_server has no per-kernel setting for it.

Why: Tornado leaves Nagle's algorithm on for a websocket and says to turn it off where small
messages must not wait (tornado/websocket.py, `WebSocketHandler.set_nodelay`: "By default, small
messages may be delayed ... call self.set_nodelay(True) once the websocket connection is
established"), though not by default (tornado#755); jupyter_server does not. A kernel answers
every request with its "busy" status first, so the answer itself is held until the browser
acknowledges that status, which Linux delays by 40 ms on loopback. bench/notebook.py measures
JupyterLab with this extension and without it in one run (bench/NOTEBOOK.md).
"""

from __future__ import annotations

import inspect
import socket
from typing import Any

_PATCHED = "_allreduce_explainer_nodelay"


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "allreduce_explainer.notebook.server"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Every kernel websocket opened from now on sends without delay. jupyter_server has no
    setting for it, so its handler's `open` is wrapped, once, and only where it is the
    coroutine jupyter_server 2 defines; otherwise the server is left as it is, and says so."""
    try:
        # here: a server loads the extension; importing the module needs no jupyter_server
        from jupyter_server.services.kernels.websocket import KernelWebsocketHandler
    except ImportError:  # a jupyter_server without the handler: nothing to change
        serverapp.log.warning("allreduce_explainer: no kernel websocket handler; nothing changed")
        return
    if getattr(KernelWebsocketHandler, _PATCHED, False):
        return
    opened = KernelWebsocketHandler.open
    if not inspect.iscoroutinefunction(opened):
        serverapp.log.warning(
            "allreduce_explainer: KernelWebsocketHandler.open is not the coroutine jupyter_server"
            " 2 defines; TCP_NODELAY left off, nothing changed"
        )
        return

    async def open_nodelay(self, *args: Any, **kwargs: Any) -> Any:
        self.set_nodelay(True)
        serverapp.log.info("allreduce_explainer: kernel websocket TCP_NODELAY=%s", nodelay(self))
        return await opened(self, *args, **kwargs)

    KernelWebsocketHandler.open = open_nodelay
    setattr(KernelWebsocketHandler, _PATCHED, True)
    serverapp.log.info("allreduce_explainer: kernel websockets send with TCP_NODELAY")


def nodelay(handler: Any) -> int | None:
    """TCP_NODELAY as the handler's socket has it now (read back from the socket, not assumed),
    for the server's log; None where the socket is out of reach."""
    stream = getattr(handler.ws_connection, "stream", None)
    sock = getattr(stream, "socket", None)
    if sock is None:
        return None
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
