"""A real HTTP proxy in front of an S3 API server (moto, on 127.0.0.1) that has a bad day: it
answers some requests with S3's `503 SlowDown` and resets the connection of others (a TCP
RST, no answer), as object stores do under load. Which ones is fixed by the request's number
(every `throttle_every`-th, every `reset_every`-th), so a run is repeatable; the counts say
what the clients went through.

It forwards everything else byte for byte (the body by Content-Length or chunked), keeping
the Host header, so S3 signatures stay valid."""

from __future__ import annotations

import http.client
import socket
import struct
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

SLOW_DOWN = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
             b"<Message>Please reduce your request rate.</Message></Error>")
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "proxy-connection", "te",
              "trailer", "upgrade"}


class FlakyProxy:
    def __init__(self, upstream: str, throttle_every: int = 12, reset_every: int = 33) -> None:
        up = urlsplit(upstream)
        self.upstream = (up.hostname, up.port)
        self.throttle_every, self.reset_every = throttle_every, reset_every
        self.lock = threading.Lock()
        self.requests = self.throttled = self.reset = 0
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    parts = []
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                        if size == 0:
                            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                                pass
                            return b"".join(parts)
                        parts.append(self.rfile.read(size))
                        self.rfile.readline()
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def _any(self) -> None:
                body = self._body()
                with proxy.lock:
                    proxy.requests += 1
                    n = proxy.requests
                if proxy.reset_every and n % proxy.reset_every == 0:
                    with proxy.lock:
                        proxy.reset += 1
                    # SO_LINGER 0: close() sends RST, the client sees "connection reset"
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                               struct.pack("ii", 1, 0))
                    self.close_connection = True
                    self.connection.close()
                    return
                if proxy.throttle_every and n % proxy.throttle_every == 0:
                    with proxy.lock:
                        proxy.throttled += 1
                    self.send_response(503, "Slow Down")
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(SLOW_DOWN)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(SLOW_DOWN)
                    return
                conn = http.client.HTTPConnection(*proxy.upstream, timeout=60)
                try:
                    headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
                    if body or self.command in ("PUT", "POST"):
                        headers["Content-Length"] = str(len(body))
                    conn.request(self.command, self.path, body=body or None, headers=headers)
                    resp = conn.getresponse()
                    data = resp.read()
                    self.send_response(resp.status, resp.reason)
                    for k, v in resp.getheaders():
                        if k.lower() not in HOP_BY_HOP and k.lower() != "content-length":
                            self.send_header(k, v)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(data)
                finally:
                    conn.close()

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FlakyProxy:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
