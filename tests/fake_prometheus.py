"""A stand-in for a misbehaving Prometheus server, for the fuzz suite's server cases:
``python tests/fake_prometheus.py PORTFILE`` listens on a free loopback port, writes it to
PORTFILE and answers range queries by the query text: ``((`` a 400 parse error, ``nothing``
an empty result, ``notjson`` an HTML page, ``several`` two series of one node; any path
under ``/auth`` a 401. (The real server is tests/prometheus_server.py's.)"""

from __future__ import annotations

import http.server
import json
import sys
import urllib.parse
from pathlib import Path


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query).get("query", [""])[0]
        if url.path.startswith("/auth"):
            self.answer(401, {"status": "error", "error": "unauthorized"})
        elif "((" in query:
            self.answer(400, {"status": "error", "errorType": "bad_data",
                              "error": "1:6: parse error: unclosed left parenthesis"})
        elif query == "notjson":
            self.answer(200, b"<html><body>a login page</body></html>")
        elif query == "several":
            series = [{"metric": {"instance": "n1", "cpu": str(c)}, "values": [[0, "1"]]}
                      for c in range(2)]
            self.answer(200, {"status": "success",
                              "data": {"resultType": "matrix", "result": series}})
        else:
            self.answer(200, {"status": "success",
                              "data": {"resultType": "matrix", "result": []}})

    def answer(self, code: int, body: object) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


if __name__ == "__main__":
    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    Path(sys.argv[1]).write_text(str(server.server_address[1]))
    server.serve_forever()
