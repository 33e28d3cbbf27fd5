"""A jupyter_server config file (`jupyter lab --config=bench/jupyter_nodelay_config.py`): the
kernel's websocket with TCP_NODELAY. Tornado leaves Nagle's algorithm on for a websocket
(tornado/websocket.py, WebSocketHandler.set_nodelay: "By default, small messages may be delayed",
"call self.set_nodelay(True) once the websocket connection is established") and jupyter_server
does not call it, so
a kernel's answer written right after its "busy" status waits on loopback for the browser's
delayed ACK (40 ms on Linux) before it leaves. bench/notebook.py measures JupyterLab with and
without it in one run."""

from jupyter_server.services.kernels.websocket import KernelWebsocketHandler

_open = KernelWebsocketHandler.open


async def _open_nodelay(self, kernel_id):
    """The websocket's writes go out as they are made."""
    self.set_nodelay(True)
    return await _open(self, kernel_id)


KernelWebsocketHandler.open = _open_nodelay
