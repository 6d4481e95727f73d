"""An OTLP/HTTP trace receiver on loopback, standing in for a collector in the tests.

A protobuf request is decoded with the `opentelemetry-proto` package, the reference definitions
(from PyPI; scripts/test installs it into target/test-python). A JSON request is read by hand:
a standard protobuf JSON parser reads OTLP's hexadecimal ids wrong, so they are checked here to
be lowercase hexadecimal of the right length. Each request is appended as one JSON line to
FILE (its path, content type, authorization header, resource and spans) before it is answered;
with `hang`, no request is ever answered. As a collector may: with `unavailable-once`, the
first request is answered 503 with `Retry-After: 0` (and not kept), and with `drop-once` its
connection is closed unanswered; with `partial`, each answer's `partial_success` says two spans
were rejected. Prints the port it listens on, then serves.

    python3 otlp_receiver.py FILE answer|hang|unavailable-once|drop-once|partial
"""

import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

OUT, MODE = sys.argv[1], sys.argv[2]
LOCK = threading.Lock()
SEEN = []


def any_value(value):
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else None


def from_protobuf(body):
    request = trace_service_pb2.ExportTraceServiceRequest()
    request.ParseFromString(body)
    resources, spans = [], []
    for resource_spans in request.resource_spans:
        resources.append({kv.key: any_value(kv.value) for kv in resource_spans.resource.attributes})
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append({
                    "trace_id": span.trace_id.hex(),
                    "span_id": span.span_id.hex(),
                    "parent": span.parent_span_id.hex(),
                    "name": span.name,
                    "kind": span.kind,
                    "start": span.start_time_unix_nano,
                    "end": span.end_time_unix_nano,
                    "attributes": {kv.key: any_value(kv.value) for kv in span.attributes},
                    "events": [event.name for event in span.events],
                    "status": span.status.code,
                    "scope": scope_spans.scope.name,
                })
    return resources, spans


def hex_id(text, length):
    if not isinstance(text, str) or not re.fullmatch("[0-9a-f]{%d}" % length, text):
        raise ValueError("not a hexadecimal id of %d digits: %r" % (length, text))
    return text


def json_value(value):
    (kind, inner), = value.items()
    return int(inner) if kind == "intValue" else inner


def from_json(body):
    request = json.loads(body)
    resources, spans = [], []
    for resource_spans in request["resourceSpans"]:
        attributes = resource_spans["resource"]["attributes"]
        resources.append({kv["key"]: json_value(kv["value"]) for kv in attributes})
        for scope_spans in resource_spans["scopeSpans"]:
            for span in scope_spans["spans"]:
                spans.append({
                    "trace_id": hex_id(span["traceId"], 32),
                    "span_id": hex_id(span["spanId"], 16),
                    "parent": hex_id(span["parentSpanId"], 16) if "parentSpanId" in span else "",
                    "name": span["name"],
                    "kind": span["kind"],
                    "start": int(span["startTimeUnixNano"]),
                    "end": int(span["endTimeUnixNano"]),
                    "attributes": {kv["key"]: json_value(kv["value"]) for kv in span["attributes"]},
                    "events": [event["name"] for event in span["events"]],
                    "status": span["status"]["code"],
                    "scope": scope_spans["scope"]["name"],
                })
    return resources, spans


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if MODE == "hang":
            threading.Event().wait()
        with LOCK:
            first = not SEEN
            SEEN.append(1)
        if first and MODE == "unavailable-once":
            self.send_response(503)
            self.send_header("Retry-After", "0")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if first and MODE == "drop-once":
            self.close_connection = True
            self.connection.close()
            return
        content_type = self.headers["Content-Type"]
        decode = from_protobuf if content_type == "application/x-protobuf" else from_json
        resources, spans = decode(body)
        record = {
            "path": self.path,
            "content_type": content_type,
            "authorization": self.headers["Authorization"],
            "resources": resources,
            "spans": spans,
        }
        with LOCK, open(OUT, "a") as out:
            out.write(json.dumps(record) + "\n")
        answer = trace_service_pb2.ExportTraceServiceResponse()
        if MODE == "partial":
            answer.partial_success.rejected_spans = 2
            answer.partial_success.error_message = "spans older than the retention"
        answer = answer.SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
server.daemon_threads = True
print(server.server_address[1], flush=True)
server.serve_forever()
