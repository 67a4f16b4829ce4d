#!/usr/bin/env python3
"""Runs a command against a real S3-compatible server on loopback (moto's server).

    with_s3_server.py PYTHON_WITH_MOTO COMMAND [ARGS...]

Starts `PYTHON_WITH_MOTO -m moto.server` on 127.0.0.1 at a free port, waits until it answers,
runs COMMAND with AWS_ENDPOINT_URL (and NUBO_GS_ENDPOINT_URL, for gs://) pointing at it and test
credentials (no profile files: HOME is a fresh directory), and stops the server. Exits with COMMAND's status; fails fast (status 1,
saying why) when the server cannot start, so that no test ever reaches a real cloud endpoint.

With NUBO_S3_RCLONE set to an rclone binary (1.65 or newer), the server is `rclone serve s3`
over a directory of the fresh HOME instead: written in Go, it serves requests in parallel and
reads a ranged GET's bytes alone, as S3 does (the benchmarks use it).
"""
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

KEY_ID, SECRET = "nubo-test-key-id", "nubo-test-secret"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    python, command = sys.argv[1], sys.argv[2:]
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory(prefix="nubo-s3-") as home:
        log = open(os.path.join(home, "server.log"), "w")
        rclone = os.environ.get("NUBO_S3_RCLONE")
        if rclone:
            os.mkdir(os.path.join(home, "buckets"))
            server_command = [rclone, "serve", "s3", "--config", "/dev/null", "--addr",
                              f"127.0.0.1:{port}", "--auth-key", f"{KEY_ID},{SECRET}",
                              "--etag-hash", "MD5", os.path.join(home, "buckets")]
        else:
            server_command = [python, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
        server = subprocess.Popen(server_command, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.time() + 30
            while True:
                try:
                    urllib.request.urlopen(endpoint + "/moto-api/", timeout=1)
                    break
                except urllib.error.HTTPError:
                    break  # it answers (rclone: 403 to an unsigned request)
                except Exception:
                    if server.poll() is not None or time.time() > deadline:
                        log.flush()
                        print("with_s3_server: the S3 test server did not start:\n" +
                              open(log.name).read()[-2000:], file=sys.stderr)
                        return 1
                    time.sleep(0.1)
            env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "GS_", "BOTO_"))}
            env.update({
                "HOME": home,
                "AWS_ENDPOINT_URL": endpoint,
                "AWS_ACCESS_KEY_ID": KEY_ID,
                "AWS_SECRET_ACCESS_KEY": SECRET,
                "AWS_REGION": "us-east-1",
                "NUBO_S3_TEST_SERVER": endpoint,
                # gs:// (Google Cloud Storage's XML API) against the same server.
                "GS_ACCESS_KEY_ID": KEY_ID,
                "GS_SECRET_ACCESS_KEY": SECRET,
                "NUBO_GS_ENDPOINT_URL": endpoint,
            })
            return subprocess.call(command, env=env)
        finally:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()


if __name__ == "__main__":
    sys.exit(main())
