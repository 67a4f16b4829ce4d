#!/usr/bin/env python3
"""A proxy on loopback in front of an S3 server that records the IAM action of every request
passing through, as AWS documents them for the S3 API, independently of nubo's own table:

  HEAD or GET of an object                       s3:GetObject
  GET of an object with ?uploadId (ListParts)    s3:ListMultipartUploadParts
  GET of a bucket (ListObjects, V1 or V2)        s3:ListBucket
  PUT of an object, a part, POST ?uploads and
  POST ?uploadId (Create/CompleteMultipartUpload) s3:PutObject
  DELETE of an object                            s3:DeleteObject
  DELETE of an object with ?uploadId             s3:AbortMultipartUpload
  PUT of a bucket                                s3:CreateBucket
  POST with X-Amz-Target: TrentService.OP (KMS)   kms:OP

    recording_proxy.py UPSTREAM_URL LOG [SLOW_PARTS_S]

Prints its port on stdout, then forwards until killed, appending "ACTION METHOD PATH PREFIX"
to LOG for each request (PREFIX: a listing's ?prefix=, URL-decoded; "-" for other requests). With SLOW_PARTS_S, each part upload is answered that many seconds late, so a
test can interrupt a multipart upload with some of its parts in.
"""
import http.client
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

UPSTREAM = urllib.parse.urlsplit(sys.argv[1])
LOG = sys.argv[2]
SLOW_PARTS = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
LOCK = threading.Lock()
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
              "proxy-authorization", "proxy-authenticate"}


def action(method: str, path: str, query: dict, target: str) -> str:
    if target.startswith("TrentService."):
        return "kms:" + target.split(".", 1)[1]
    parts = path.lstrip("/").split("/", 1)
    object_level = len(parts) == 2 and parts[1] != ""
    if not object_level:
        return "s3:CreateBucket" if method == "PUT" else "s3:ListBucket"
    if method == "GET" and "uploadId" in query:
        return "s3:ListMultipartUploadParts"
    if method in ("GET", "HEAD"):
        return "s3:GetObject"
    if method == "DELETE":
        return "s3:AbortMultipartUpload" if "uploadId" in query else "s3:DeleteObject"
    return "s3:PutObject"


class Proxy(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def forward(self) -> None:
        split = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(split.query, keep_blank_values=True)
        with LOCK, open(LOG, "a") as log:
            target = self.headers.get("X-Amz-Target") or ""
            prefix = query["prefix"][0] if "prefix" in query else "-"
            log.write(f"{action(self.command, split.path, query, target)} {self.command} "
                      f"{urllib.parse.unquote(split.path)} {prefix or '<empty>'}\n")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        upstream = http.client.HTTPConnection(UPSTREAM.hostname, UPSTREAM.port, timeout=120)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
        upstream.request(self.command, self.path, body=body, headers=headers)
        answer = upstream.getresponse()
        data = answer.read()
        if SLOW_PARTS and self.command == "PUT" and "partNumber" in query:
            time.sleep(SLOW_PARTS)
        self.send_response(answer.status, answer.reason)
        for k, v in answer.getheaders():
            # A HEAD's Content-Length is the object's size: passed on as it is.
            if k.lower() not in HOP_BY_HOP and (k.lower() != "content-length" or
                                                self.command == "HEAD"):
                self.send_header(k, v)
        if self.command != "HEAD":
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        upstream.close()

    def handle_one_request(self) -> None:
        try:
            super().handle_one_request()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client was killed mid-request: nothing to do

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = forward


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
