"""A local HTTP file server for tests of downloads (datasets, weights, hub archives).

It serves one directory on 127.0.0.1 from a background thread and can misbehave on demand for a
given path, a given number of times: answer an HTTP error, cut the body short (a truncated
download), send corrupt bytes of the right length, or drop the connection before answering.

Usage::

    from tests.http_server import serve_directory

    with serve_directory(tmp_path / "www") as server:
        url = server.url("weights.pdparams")
        server.truncate("weights.pdparams", times=1)   # the next GET is cut short
        ...
        assert server.hits("weights.pdparams") == 2

As a pytest fixture in a test module::

    @pytest.fixture
    def server(tmp_path):
        with serve_directory(tmp_path / "www") as srv:
            yield srv
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

__all__ = ["FileServer", "serve_directory"]


class FileServer:
    """Serve the files under ``root`` at ``http://127.0.0.1:<port>/``.

    Args:
        root (str | os.PathLike): Directory whose files are served (GET and HEAD).
        send_length (bool): Send a Content-Length header (default True).

    Attributes:
        requests (list[str]): Paths of the GET requests received, in order.
    """

    def __init__(self, root, send_length: bool = True):
        self.root = os.path.abspath(os.fspath(root))
        os.makedirs(self.root, exist_ok=True)
        self.send_length = send_length
        self.requests: list[str] = []
        self._faults: dict[str, list[tuple[str, object]]] = {}
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> FileServer:
        """Start serving in a daemon thread (port chosen by the OS); returns self."""
        handler = _make_handler(self)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True,
                                        kwargs={"poll_interval": 0.05})
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the server and close its socket."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._thread.join()
            self._httpd = None

    def __enter__(self) -> FileServer:
        return self.start() if self._httpd is None else self

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- addresses and files ---------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>`` (no trailing slash)."""
        if self._httpd is None:
            raise RuntimeError("FileServer is not running; call start() or use `with`")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def url(self, relpath: str) -> str:
        """The URL of a file under ``root`` (``relpath`` uses '/' separators)."""
        return f"{self.base_url}/{relpath.lstrip('/')}"

    def put(self, relpath: str, data: bytes) -> str:
        """Write ``data`` to ``root/relpath`` and return its URL."""
        path = os.path.join(self.root, *relpath.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        return self.url(relpath)

    def hits(self, relpath: str) -> int:
        """How many GET requests ``relpath`` received."""
        return Counter(self.requests)["/" + relpath.lstrip("/")]

    # -- faults ----------------------------------------------------------------------------
    def fail(self, relpath: str, status: int = 500, times: int = 1) -> None:
        """The next ``times`` GETs of ``relpath`` answer HTTP ``status`` with no body."""
        self._add(relpath, "status", status, times)

    def truncate(self, relpath: str, nbytes: int | None = None, times: int = 1) -> None:
        """The next ``times`` GETs announce the full length but send only ``nbytes`` bytes
        (default: half the file) and close the connection."""
        self._add(relpath, "truncate", nbytes, times)

    def corrupt(self, relpath: str, times: int = 1) -> None:
        """The next ``times`` GETs send bytes of the right length but wrong content."""
        self._add(relpath, "corrupt", None, times)

    def drop(self, relpath: str, times: int = 1) -> None:
        """The next ``times`` GETs close the connection without any response."""
        self._add(relpath, "drop", None, times)

    def clear_faults(self) -> None:
        """Forget every pending fault."""
        with self._lock:
            self._faults.clear()

    def _add(self, relpath, kind, arg, times):
        key = "/" + relpath.lstrip("/")
        with self._lock:
            self._faults.setdefault(key, []).extend([(kind, arg)] * times)

    def _next_fault(self, key):
        with self._lock:
            self.requests.append(key)
            pending = self._faults.get(key)
            return pending.pop(0) if pending else None


def _make_handler(server: FileServer):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):  # keep test output quiet
            pass

        def _path(self):
            return unquote(urlsplit(self.path).path)

        def _resolve(self, key):
            path = os.path.realpath(os.path.join(server.root, key.lstrip("/")))
            if not path.startswith(server.root + os.sep) or not os.path.isfile(path):
                return None
            return path

        def do_HEAD(self):
            path = self._resolve(self._path())
            if path is None:
                self._empty(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(os.path.getsize(path)))
            self.end_headers()

        def do_GET(self):
            key = self._path()
            fault = server._next_fault(key)
            if fault is not None and fault[0] == "drop":
                self.close_connection = True
                self.connection.shutdown(2)
                return
            if fault is not None and fault[0] == "status":
                self._empty(fault[1])
                return
            path = self._resolve(key)
            if path is None:
                self._empty(404)
                return
            with open(path, "rb") as f:
                data = f.read()
            body = data
            if fault is not None and fault[0] == "corrupt":
                body = bytes(b ^ 0xFF for b in data[:64]) + data[64:] if data else b""
            if fault is not None and fault[0] == "truncate":
                n = len(data) // 2 if fault[1] is None else fault[1]
                body = data[:n]
                self.close_connection = True
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            if server.send_length:
                self.send_header("Content-Length", str(len(data)))
            else:
                self.close_connection = True
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()

        def _empty(self, status):
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

    return Handler


@contextlib.contextmanager
def _no_proxy_for_localhost():
    # an http_proxy in the environment would otherwise route 127.0.0.1 through the proxy
    saved = {k: os.environ.get(k) for k in ("NO_PROXY", "no_proxy")}
    for k, v in saved.items():
        os.environ[k] = ",".join(x for x in (v, "127.0.0.1", "localhost") if x)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def serve_directory(root, send_length: bool = True):
    """Context manager: a running :class:`FileServer` for ``root``, stopped on exit.

    While it runs, 127.0.0.1 is added to ``NO_PROXY`` so that a proxy configured in the
    environment does not intercept the requests.
    """
    with _no_proxy_for_localhost():
        srv = FileServer(root, send_length=send_length).start()
        try:
            yield srv
        finally:
            srv.stop()
