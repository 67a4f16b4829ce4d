#!/usr/bin/env python3
"""A broken or hostile S3 endpoint on loopback, for the client's bad-input tests. The bucket
names the misbehaviour (path-style requests: /BUCKET/KEY):

  truncated    objects declare 1000 bytes and send 10, then close
  shortrange   a ranged GET answers 200 with 7 bytes, whatever was asked
  huge         every answer declares 10 GB and streams zeros until the client hangs up
  badxml       ListObjectsV2 answers XML that is not XML
  unavailable  every request: 503 SlowDown
  unsupported  every request: 501 NotImplemented (a server that will never do it)
  slow         headers, then one byte every 2 s (slowloris)
  altered      objects whose bytes are not those their ETag describes, as another client (not
               nubo) would have uploaded them: `single` (put whole), `multi` (2 parts of 6
               bytes); `intact` is a 2-part object whose ETag matches; `kms` is stored
               with SSE-KMS, whose ETag is not an MD5 of the content
  redirect     every request: 307 TemporaryRedirect to another endpoint
  flipping     stores what it is sent with one byte flipped, as behind a proxy that alters
               each PUT body and strips its Content-MD5; answers the ETags of what it stored
               (objects put whole, and multipart uploads: create, parts, list, complete, abort)
  badcomplete  stores parts intact, but completes a multipart upload with an ETag of other
               parts than those sent
  kmsflip      as flipping, for objects under SSE-KMS (their ETags no MD5 of the content), as a
               server that checks checksums answers: with the CRC-32C of what it received
  dropmid      stores objects intact and serves ranges, but the first GET of each range of 1 MiB
               or more sends half of it and closes the connection; `_dropped` counts them
  stall        stores objects intact and serves ranges, but the first GET of each range over
               1 MiB sends its headers and then nothing, holding the connection for 120 s;
               `_stalled` counts them, `_asked_again` the GETs of a range whose first is still
               stalled
  signed       checks every request's Signature V4 as S3 does (written here from the
               specification, independently of nubo's), for key id AKIDHOSTILE with secret
               `secret`: a good signature gets the object "signed ok", a bad one 403
               SignatureDoesNotMatch, another key id 403 InvalidAccessKeyId; a PUT's body is
               checked by its signed SHA-256, or, signed as UNSIGNED-PAYLOAD, by a Content-MD5
               that must be signed and match (400 otherwise); the key signedpayload.bin
               refuses UNSIGNED-PAYLOAD (400 NotImplemented), as servers that do not take it

Prints its port on stdout, then serves until killed.
Usage: hostile_s3_server.py
"""
import base64
import hashlib
import hmac
import re
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


BODY = b"hello, world"
md5 = hashlib.md5
ALTERED = {  # key: (ETag, part size or 0 for an object put whole)
    "single": (md5(b"HELLO, WORLD").hexdigest(), 0),
    "multi": (md5(md5(b"hello,").digest() + md5(b"WORLD!").digest()).hexdigest() + "-2", 6),
    "intact": (md5(md5(BODY[:6]).digest() + md5(BODY[6:]).digest()).hexdigest() + "-2", 6),
    "kms": ("0f1e2d3c4b5a69788796a5b4c3d2e1f0", 0),
}


KEYS = {"AKIDHOSTILE": "secret"}

STORED = {}  # (bucket, key) -> bytes, for flipping, badcomplete, kmsflip, dropmid and stall
DROPPED = set()  # (key, range start) whose GET dropmid cut
STALLED = set()  # (key, range start) whose first GET stall holds
ASKED_AGAIN = set()  # (key, range start) asked for while its first GET was held
UPLOADS = {}  # upload id -> {part number: bytes}


def sigv4_problem(method: str, target: str, headers) -> str:
    """The S3 error code a request's Signature V4 earns, or "" when it is right."""
    auth = headers.get("Authorization", "")
    m = re.fullmatch(r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/s3/aws4_request, *"
                     r"SignedHeaders=([^,]+), *Signature=([0-9a-f]{64})", auth)
    if not m:
        return "AccessDenied"
    key_id, day, region, signed, signature = m.groups()
    if key_id not in KEYS:
        return "InvalidAccessKeyId"
    path, _, query = target.partition("?")
    pairs = sorted(tuple((p.split("=", 1) + [""])[:2]) for p in query.split("&") if p)
    canonical_query = "&".join(f"{k}={v}" for k, v in pairs)
    names = signed.split(";")
    canonical_headers = "".join(f"{n}:{' '.join(headers.get(n, '').split())}\n" for n in names)
    canonical = "\n".join([method, path, canonical_query, canonical_headers, signed,
                           headers.get("x-amz-content-sha256", "UNSIGNED-PAYLOAD")])
    scope = f"{day}/{region}/s3/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", headers.get("x-amz-date", ""), scope,
                         hashlib.sha256(canonical.encode()).hexdigest()])
    key = ("AWS4" + KEYS[key_id]).encode()
    for part in (day, region, "s3", "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    expected = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    return "" if hmac.compare_digest(expected, signature) else "SignatureDoesNotMatch"


def payload_problem(headers, body: bytes) -> str:
    """As S3 checks a signed PUT's body: by its SHA-256 (x-amz-content-sha256), or, signed as
    UNSIGNED-PAYLOAD, by its Content-MD5, which must then be signed (here, to check that nubo
    signs it: it is what binds the body then)."""
    claimed = headers.get("x-amz-content-sha256", "")
    if claimed != "UNSIGNED-PAYLOAD":
        return "" if claimed == hashlib.sha256(body).hexdigest() else "XAmzContentSHA256Mismatch"
    m = re.search(r"SignedHeaders=([^,]+)", headers.get("Authorization", ""))
    if "content-md5" not in (m.group(1).split(";") if m else []):
        return "UnsignedPayloadWithoutSignedContentMD5"
    if headers.get("content-md5", "") != base64.b64encode(md5(body).digest()).decode():
        return "BadDigest"
    return ""


def _crc32c_table() -> list:
    table = []
    for b in range(256):
        c = b
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
        table.append(c)
    return table


CRC32C_TABLE = _crc32c_table()


def crc32c_base64(data: bytes) -> str:
    """x-amz-checksum-crc32c of `data` (CRC-32C, big-endian, base64), written from RFC 3720."""
    c = 0xFFFFFFFF
    for b in data:
        c = (c >> 8) ^ CRC32C_TABLE[(c ^ b) & 0xFF]
    return base64.b64encode((c ^ 0xFFFFFFFF).to_bytes(4, "big")).decode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # quiet
        pass

    def bucket(self) -> str:
        return self.path.lstrip("/").split("/", 1)[0].split("?", 1)[0]

    def head(self, status: int, length: int, content_type: str = "application/octet-stream"):
        self.send_response(status)
        self.send_header("Content-Length", str(length))
        self.send_header("Content-Type", content_type)
        self.send_header("ETag", '"0123456789abcdef0123456789abcdef"')
        self.send_header("Last-Modified", "Wed, 02 Dec 2026 12:00:00 GMT")
        self.end_headers()

    def altered(self, with_body: bool) -> None:
        key = self.path.split("?", 1)[0].rsplit("/", 1)[-1]
        etag, part = ALTERED.get(key, ("", 0))
        if not etag:
            return self.not_found(with_body)
        body, status = BODY, 200
        m = re.search(r"partNumber=(\d+)", self.path)
        r = re.fullmatch(r"bytes=(\d+)-(\d+)", self.headers.get("Range", ""))
        if m and part:
            n = int(m.group(1))
            body, status = BODY[(n - 1) * part:n * part], 206
        elif r:
            body, status = BODY[int(r.group(1)):int(r.group(2)) + 1], 206
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("ETag", f'"{etag}"')
        if part:
            self.send_header("x-amz-mp-parts-count", str(len(BODY) // part))
        if key == "kms":
            self.send_header("x-amz-server-side-encryption", "aws:kms")
        self.end_headers()
        if with_body:
            self.wfile.write(body)

    def not_found(self, with_body: bool) -> None:
        body = b"<Error><Code>NoSuchKey</Code><Message>nothing here</Message></Error>"
        self.head(404, len(body), "application/xml")
        if with_body:
            self.wfile.write(body)

    def answer(self, status: int, body: bytes = b"", etag: str = "", with_body: bool = True,
               content_type: str = "application/xml", headers: dict = None) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Type", content_type)
        if etag:
            self.send_header("ETag", f'"{etag}"')
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if with_body:
            self.wfile.write(body)

    def store(self, bucket: str, sent: bytes, with_body: bool) -> None:
        """A small S3 of uploads: the bytes kept are flipped (flipping) or as sent."""
        path, _, query = self.path.partition("?")
        key = path.lstrip("/").split("/", 1)[-1]
        q = dict(p.split("=", 1) if "=" in p else (p, "") for p in query.split("&") if p)
        kept = sent
        if bucket in ("flipping", "kmsflip") and sent:
            kept = bytearray(sent)
            kept[len(kept) // 2] ^= 0x01
            kept = bytes(kept)
        if self.command == "POST" and "uploads" in q:
            upload = f"upload-{len(UPLOADS) + 1}"
            UPLOADS[upload] = {}
            return self.answer(200, f"<InitiateMultipartUploadResult><UploadId>{upload}"
                                    f"</UploadId></InitiateMultipartUploadResult>".encode())
        if "uploadId" in q and q["uploadId"] not in UPLOADS:
            return self.answer(404, b"<Error><Code>NoSuchUpload</Code></Error>")
        # Under SSE-KMS the ETag is no MD5 of the content; the checksum still tells.
        kms = {"x-amz-server-side-encryption": "aws:kms",
               "x-amz-checksum-crc32c": crc32c_base64(kept)} if bucket == "kmsflip" else {}
        stored_etag = "0f1e2d3c4b5a69788796a5b4c3d2e1f0" if kms else md5(kept).hexdigest()
        if self.command == "PUT" and "partNumber" in q:
            UPLOADS[q["uploadId"]][int(q["partNumber"])] = kept
            return self.answer(200, etag=stored_etag, headers=kms)
        if self.command == "GET" and "uploadId" in q:
            parts = "".join(f"<Part><PartNumber>{n}</PartNumber><ETag>&quot;{md5(b).hexdigest()}"
                            f"&quot;</ETag><Size>{len(b)}</Size></Part>"
                            for n, b in sorted(UPLOADS[q["uploadId"]].items()))
            return self.answer(200, f"<ListPartsResult>{parts}<IsTruncated>false</IsTruncated>"
                                    f"</ListPartsResult>".encode())
        if self.command == "POST" and "uploadId" in q:
            parts = [b for _, b in sorted(UPLOADS.pop(q["uploadId"]).items())]
            STORED[(bucket, key)] = b"".join(parts)
            digests = [md5(b).digest() for b in parts]
            if bucket == "badcomplete":
                digests = digests[1:] + digests[:1] + digests[:1]  # other parts, one more
            etag = md5(b"".join(digests)).hexdigest() + f"-{len(digests)}"
            return self.answer(200, f"<CompleteMultipartUploadResult><ETag>&quot;{etag}&quot;"
                                    f"</ETag></CompleteMultipartUploadResult>".encode())
        if self.command == "DELETE":
            UPLOADS.pop(q.get("uploadId", ""), None)
            STORED.pop((bucket, key), None)
            return self.answer(204)
        if self.command == "PUT":
            STORED[(bucket, key)] = kept
            return self.answer(200, etag=stored_etag, headers=kms)
        if (bucket, key) in STORED:
            data = STORED[(bucket, key)]
            r = re.fullmatch(r"bytes=(\d+)-(\d+)", self.headers.get("Range", ""))
            if r and with_body:
                first, last = int(r.group(1)), int(r.group(2))
                part = data[first:last + 1]
                if bucket == "stall" and len(part) > 1 << 20:
                    if (key, first) in STALLED:
                        ASKED_AGAIN.add((key, first))
                        STORED[(bucket, "_asked_again")] = str(len(ASKED_AGAIN)).encode()
                    else:
                        STALLED.add((key, first))
                        STORED[(bucket, "_stalled")] = str(len(STALLED)).encode()
                        return self.cut_range(part, data, b"", 120)
                if bucket == "dropmid" and len(part) >= 1 << 20 and (key, first) not in DROPPED:
                    # Half the range, then the connection closes: once per range.
                    DROPPED.add((key, first))
                    STORED[(bucket, "_dropped")] = str(len(DROPPED)).encode()
                    return self.cut_range(part, data, part[:len(part) // 2], 0)
                return self.answer(206, part, md5(data).hexdigest(), with_body,
                                   "application/octet-stream")
            return self.answer(200, data, md5(data).hexdigest(), with_body,
                               "application/octet-stream")
        return self.not_found(with_body)

    def cut_range(self, part: bytes, data: bytes, sent: bytes, hold_s: float) -> None:
        """Answers a ranged GET of `part` (of the object `data`) with its headers and only
        `sent` of it, holds the connection `hold_s` seconds, then closes it."""
        self.send_response(206)
        self.send_header("Content-Length", str(len(part)))
        self.send_header("ETag", f'"{md5(data).hexdigest()}"')
        self.end_headers()
        self.wfile.write(sent)
        self.wfile.flush()
        time.sleep(hold_s)
        self.close_connection = True

    def serve(self, with_body: bool) -> None:
        b = self.bucket()
        sent = b""
        if self.headers.get("Content-Length"):
            sent = self.rfile.read(int(self.headers["Content-Length"]))
        if b in ("flipping", "badcomplete", "kmsflip", "dropmid", "stall"):
            self.store(b, sent, with_body)
        elif b == "redirect":
            body = (b"<Error><Code>TemporaryRedirect</Code><Message>Please re-send this request to "
                    b"the specified temporary endpoint.</Message><Endpoint>redirect.s3.eu-west-3."
                    b"amazonaws.com</Endpoint></Error>")
            self.send_response(307)
            self.send_header("Location", "https://redirect.s3.eu-west-3.amazonaws.com/object.bin")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if with_body:
                self.wfile.write(body)
        elif b == "signed":
            problem = sigv4_problem(self.command, self.path, self.headers)
            status = 403 if problem else 200
            if not problem and self.command == "PUT":
                status, problem = 400, payload_problem(self.headers, sent)
                # The key "unsigned.bin" also asks that the body not be hashed twice; the key
                # "signedpayload.bin" refuses UNSIGNED-PAYLOAD, as a server that does not take it.
                if (not problem and self.path.endswith("/unsigned.bin")
                        and self.headers.get("x-amz-content-sha256") != "UNSIGNED-PAYLOAD"):
                    problem = "ExpectedUnsignedPayload"
                if (not problem and self.path.endswith("/signedpayload.bin")
                        and self.headers.get("x-amz-content-sha256") == "UNSIGNED-PAYLOAD"):
                    problem = "NotImplemented"
                if not problem:
                    status = 200
            body = (f"<Error><Code>{problem}</Code><Message>refused</Message></Error>".encode()
                    if problem else (b"signed ok" if self.command != "PUT" else b""))
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            # A PUT's ETag is the MD5 of what was stored: its body.
            stored = sent if self.command == "PUT" and not problem else body
            self.send_header("ETag", f'"{md5(stored).hexdigest()}"')
            self.end_headers()
            if with_body:
                self.wfile.write(body)
        elif b == "altered":
            self.altered(with_body)
        elif b == "truncated":
            self.head(200, 1000)
            if with_body:
                self.wfile.write(b"0123456789")
            self.close_connection = True
        elif b == "shortrange":
            self.head(200, 7 if with_body else 1 << 20)
            if with_body:
                self.wfile.write(b"7 bytes")
        elif b == "huge":
            self.head(200, 10 << 30)
            chunk = bytes(1 << 20)
            try:
                while with_body:
                    self.wfile.write(chunk)
            except OSError:
                pass
            self.close_connection = True
        elif b == "badxml" and "list-type=2" in self.path:
            body = b"<?xml version='1.0'?><ListBucketResult><Contents><Key>a</Key><Size>12"
            self.head(200, len(body), "application/xml")
            if with_body:
                self.wfile.write(body)
        elif b == "unavailable":
            body = b"<Error><Code>SlowDown</Code><Message>Please reduce your rate</Message></Error>"
            self.head(503, len(body), "application/xml")
            if with_body:
                self.wfile.write(body)
        elif b == "unsupported":
            body = (b"<Error><Code>NotImplemented</Code><Message>A header you provided implies "
                    b"functionality that is not implemented</Message></Error>")
            self.head(501, len(body), "application/xml")
            if with_body:
                self.wfile.write(body)
        elif b == "slow":
            self.head(200, 1000)
            try:
                for _ in range(500):
                    if not with_body:
                        break
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(2)
            except OSError:
                pass
            self.close_connection = True
        else:
            self.not_found(with_body)

    def do_GET(self) -> None:
        self.serve(True)

    def do_HEAD(self) -> None:
        self.serve(False)

    def do_PUT(self) -> None:
        self.serve(True)

    def do_POST(self) -> None:
        self.serve(True)

    def do_DELETE(self) -> None:
        self.serve(True)


def main() -> int:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
