"""An HTTPS server on loopback for the tests: it appends each request's method and target to
FILE, reads the body its Content-Length gives, and answers 200 with a Ping-Body-Limit. Prints
the port it listens on, then serves.

    python3 tls_sink.py CERT KEY FILE
"""

import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CERT, KEY, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
LOCK = threading.Lock()


class Sink(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with LOCK, open(OUT, "a") as out:
            out.write("%s %s\n" % (self.command, self.path))
        self.send_response(200)
        self.send_header("Ping-Body-Limit", "10000")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"OK")

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
server.daemon_threads = True
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(CERT, KEY)
server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
server.serve_forever()
