"""An OTLP trace receiver for scripts/bench: takes every export on a gRPC port and counts the
spans, printing the count when stopped. Usage: otlp-sink.py HOST:PORT."""

import signal
import sys
import threading
from concurrent import futures

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

spans = 0
lock = threading.Lock()


class Sink(trace_service_pb2_grpc.TraceServiceServicer):
    def Export(self, request, context):  # noqa: N802 - the generated name
        global spans
        count = sum(len(s.spans) for r in request.resource_spans for s in r.scope_spans)
        with lock:
            spans += count
        return trace_service_pb2.ExportTraceServiceResponse()


server = grpc.server(futures.ThreadPoolExecutor(2))
trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Sink(), server)
server.add_insecure_port(sys.argv[1])
server.start()
done = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: done.set())
signal.signal(signal.SIGINT, lambda *_: done.set())
done.wait()
server.stop(0)
print(f"spans={spans}", flush=True)
