#!/usr/bin/env python3
"""`nubo-cost catalog update` against a catalog server on loopback, started here: success, 304
with the ETag, 404, 500, a truncated body, a stalled server past the timeout, a body that is not
the format, one source failing while another refreshes, and SIGKILL at any moment of an update,
after which the cache holds the old version or the new one, never a mix. Then `plan` and
`catalog` reading the cache, and SkyPilot's own local catalog. And a hostile server: an ETag of
byte 0xFF or of 90 KB, a body cut short with no length, a drip of bytes, rows whose names hold
control characters, Azure pages that link to themselves or to another host, a mirror URL with a
password, and concurrent updates.

Usage: update_test.py NUBO_COST FIXTURES_DIR WORK_DIR
"""

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

BIN, FIXTURES, WORK = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
AWS = (FIXTURES / "skypilot_aws.csv").read_bytes()
ADVISOR = (FIXTURES / "spot_advisor.json").read_bytes()
# A large valid body, so that a kill can land anywhere in the transfer or the write.
BIG = AWS + b"".join(AWS.split(b"\n", 1)[1].replace(b"us-east-1", f"r{i}".encode())
                     for i in range(4000))


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def send_body(self, body: bytes, etag: str = "") -> None:
        if etag and self.headers.get("If-None-Match") == etag:
            self.send_response(304)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        if etag:
            self.send_header("ETag", etag)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
        path = self.path
        if path == "/aws.csv":
            self.send_body(AWS, '"v1"')
        elif path == "/aws2.csv":
            self.send_body(AWS.replace(b"21.957642", b"20.0"), '"v2"')
        elif path == "/big.csv":
            self.send_body(BIG, '"big"')
        elif path == "/advisor.json":
            self.send_body(ADVISOR, '"a1"')
        elif path in ("/404", "/500"):
            self.send_response(int(path[1:]))
            self.end_headers()
        elif path == "/truncated":
            self.send_response(200)
            self.send_header("Content-Length", str(len(AWS) + 5000))
            self.end_headers()
            self.wfile.write(AWS[: len(AWS) // 2])
            self.wfile.flush()
            self.connection.shutdown(2)
        elif path == "/stall":
            self.send_response(200)
            self.send_header("Content-Length", str(len(AWS)))
            self.end_headers()
            self.wfile.write(AWS[:100])
            self.wfile.flush()
            time.sleep(30)
        elif path == "/etag-ff":  # latin-1 on the wire: byte 0xFF, not UTF-8
            self.send_body(AWS, '"\xff"')
        elif path == "/etag-long":
            self.send_body(AWS, '"' + "x" * 90000 + '"')
        elif path == "/half":  # no Content-Length, not chunked: HTTP/1.0 ends it by closing
            self.send_response(200)
            self.end_headers()
            self.wfile.write(AWS[: AWS.rfind(b"\n", 0, len(AWS) // 2) + 1])
        elif path == "/drip":
            self.send_response(200)
            self.send_header("Content-Length", str(len(AWS)))
            self.end_headers()
            try:
                for i in range(len(AWS)):
                    self.wfile.write(AWS[i:i + 1])
                    self.wfile.flush()
                    time.sleep(0.05)
            except OSError:
                pass
        elif path == "/control":  # a region holding CR: a YAML key once hid behind it
            lines = AWS.split(b"\n")
            evil = lines[1].replace(b"us-east-1", b"R\rsetup: touch X\r#")
            self.send_body(b"\n".join([lines[0], evil] + lines[1:]))
        elif path == "/poisoned.csv":  # one GpuInfo of 32,000 nested lists: 64 KB
            lines = AWS.split(b"\n")
            row = lines[1].split(b'"')
            row[1] = b"[" * 32000 + b"]" * 32000
            self.send_body(b"\n".join([lines[0], b'"'.join(row).replace(b"use1-az1", b"use1-az9")]
                                      + lines[1:]))
        elif path == "/private.csv":
            if self.headers.get("Authorization", "") == "Basic dTpzM2NyZXQ=":  # u:s3cret
                self.send_body(AWS, '"p1"')
            else:
                self.send_response(401)
                self.end_headers()
        elif path.startswith("/azure"):
            self.azure(path)
        elif path == "/garbage":
            self.send_body(b"not,a,catalog\n1,2,3\n")
        elif path == "/mostly-bad":
            lines = AWS.split(b"\n")
            self.send_body(b"\n".join([lines[0], lines[1]] + [b"g5.xlarge,A10G,1,4,16,,x,,r,z,a"] * 20))
        else:
            self.send_response(404)
            self.end_headers()


    def azure(self, path: str) -> None:
        """Azure Retail Prices pages: /azure-loop names itself as the next page (10 MB each),
        /azure-away names a page on another host (localhost, the same port)."""
        port = self.server.server_address[1]
        if path == "/azure-loop":
            item = json.loads((FIXTURES / "azure_retail.json").read_text())["Items"][0]
            page = {"Items": [item] * 8000, "NextPageLink": f"http://127.0.0.1:{port}/azure-loop"}
        elif path == "/azure-away":
            page = json.loads((FIXTURES / "azure_retail.json").read_text())
            page["NextPageLink"] = f"http://localhost:{port}/azure-hit"
        else:  # /azure-hit: must never be asked for
            Handler.hits += 1
            page = {"Items": []}
        self.send_body(json.dumps(page).encode())

    hits = 0


def run(*args: str, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout,
                          env=env or ENV)


class UpdateTest(unittest.TestCase):
    server: ThreadingHTTPServer
    base: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        cls.server.daemon_threads = True
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()
        cls.base = f"http://127.0.0.1:{cls.server.server_address[1]}"

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.shutdown()

    def setUp(self) -> None:
        self.cache = WORK / self.id().rsplit(".", 1)[-1]
        shutil.rmtree(self.cache, ignore_errors=True)

    def update(self, *urls: str, timeout: str = "2s") -> subprocess.CompletedProcess:
        args = ["catalog", "update", "--cache", str(self.cache), "--timeout", timeout, "--json"]
        for spec in urls:
            name, path = spec.split("=", 1)
            args += ["--source", name, "--url", f"{name}={self.base}{path}"]
        return run(*args)

    def cached(self, name: str = "skypilot-aws") -> tuple[dict, bytes]:
        meta, _, body = (self.cache / f"{name}.source").read_bytes().partition(b"\n")
        return json.loads(meta), body

    def status(self, out: subprocess.CompletedProcess, name: str = "skypilot-aws") -> dict:
        return next(s for s in json.loads(out.stdout)["sources"] if s["name"] == name)

    def test_success_then_not_modified(self) -> None:
        out = self.update("skypilot-aws=/aws.csv")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(self.status(out)["status"], "updated")
        meta, body = self.cached()
        self.assertEqual(body, AWS)
        self.assertEqual((meta["etag"], meta["url"]), ('"v1"', f"{self.base}/aws.csv"))
        again = self.update("skypilot-aws=/aws.csv")
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertEqual(self.status(again)["status"], "not modified")
        self.assertEqual(self.cached()[1], AWS)
        self.assertGreaterEqual(self.cached()[0]["fetched"], meta["fetched"])

    def test_failures_keep_the_last_good_version(self) -> None:
        self.assertEqual(self.update("skypilot-aws=/aws.csv").returncode, 0)
        good = self.cached()
        for path, why in (("/404", "HTTP 404"), ("/500", "HTTP 500"),
                          ("/truncated", "partial"), ("/garbage", "missing column 'InstanceType'"),
                          ("/mostly-bad", "skips 20 of its 21 records")):
            with self.subTest(path=path):
                out = self.update(f"skypilot-aws={path}")
                self.assertEqual(out.returncode, 1, out.stdout + out.stderr)
                s = self.status(out)
                self.assertEqual(s["status"], "failed")
                self.assertIn(why, s["message"])
                self.assertIn("kept the version fetched", s["message"])
                self.assertEqual(self.cached(), good)

    def test_a_stalled_server_is_given_up_after_the_timeout(self) -> None:
        start = time.monotonic()
        out = self.update("skypilot-aws=/stall", timeout="1s")
        # libcurl judges a stall by the speed over its last few seconds.
        self.assertLess(time.monotonic() - start, 15)
        self.assertEqual(out.returncode, 1)
        message = self.status(out)["message"]
        self.assertIn("no progress for 1 s", message)
        self.assertIn("the embedded snapshot answers", message)
        self.assertFalse((self.cache / "skypilot-aws.source").exists())

    def test_one_source_failing_while_another_refreshes(self) -> None:
        out = self.update("skypilot-aws=/500", "aws-spot-advisor=/advisor.json")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(self.status(out)["status"], "failed")
        self.assertEqual(self.status(out, "aws-spot-advisor")["status"], "updated")
        text = run("catalog", "update", "--cache", str(self.cache), "--source", "skypilot-aws",
                   "--url", f"skypilot-aws={self.base}/500")
        self.assertIn("No source could be refreshed", text.stdout)

    def test_bad_options_are_refused(self) -> None:
        out = run("catalog", "update", "--cache", str(self.cache), "--source", "nope")
        self.assertEqual(out.returncode, 1)
        self.assertIn("unknown catalog source 'nope'", out.stderr)
        out = run("catalog", "update", "--cache", str(self.cache), "--url", "skypilot-aws=ftp://x")
        self.assertIn("is not an http(s) URL", out.stderr)

    def test_sigkill_leaves_the_old_or_the_new_version(self) -> None:
        self.assertEqual(self.update("skypilot-aws=/aws.csv").returncode, 0)
        old = self.cached()[1]
        seen = set()
        rng = random.Random(7)
        for _ in range(12):
            args = [BIN, "catalog", "update", "--cache", str(self.cache), "--source",
                    "skypilot-aws", "--url", f"skypilot-aws={self.base}/big.csv"]
            proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    env=ENV)
            time.sleep(rng.uniform(0.0, 0.4))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            body = self.cached()[1]
            self.assertIn(body, (old, BIG))
            seen.add(body == BIG)
            # Back to the old version for the next round, now and then.
            if body == BIG and rng.random() < 0.5:
                self.assertEqual(self.update("skypilot-aws=/aws.csv").returncode, 0)
                old = self.cached()[1]
        # A kill between creating the temporary file and renaming it leaves it behind, never
        # read; the next update of that source removes it.
        self.assertEqual(self.update("skypilot-aws=/aws.csv").returncode, 0)
        self.assertEqual([p.name for p in self.cache.iterdir()], ["skypilot-aws.source"])

    def test_etags_that_are_not_text_are_dropped_never_written(self) -> None:
        # Byte 0xFF once ended the update in an uncaught JSON error; 90 KB left a cache file no
        # plan could read, the last good version gone.
        for path in ("/etag-ff", "/etag-long"):
            with self.subTest(path=path):
                out = self.update(f"skypilot-aws={path}")
                self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
                self.assertEqual(self.status(out)["status"], "updated")
                meta, body = self.cached()
                self.assertEqual((meta["etag"], body), ("", AWS))
                env = dict(ENV, NUBO_CATALOG_CACHE=str(self.cache))
                listed = run("catalog", "--provider", "aws", "--json", env=env)
                self.assertEqual(listed.returncode, 0, listed.stderr)
                self.assertNotIn("using the embedded", listed.stderr)

    def test_a_body_cut_short_or_dripped_is_refused(self) -> None:
        self.assertEqual(self.update("skypilot-aws=/aws.csv").returncode, 0)
        good = self.cached()
        out = self.update("skypilot-aws=/half")
        self.assertEqual(self.status(out)["status"], "failed", out.stdout)
        self.assertIn("did not say where the body ends", self.status(out)["message"])
        self.assertEqual(self.cached(), good)
        start = time.monotonic()
        out = self.update("skypilot-aws=/drip", timeout="2s")
        self.assertLess(time.monotonic() - start, 20)  # the drip alone would take 20 s and more
        self.assertEqual(self.status(out)["status"], "failed", out.stdout)
        self.assertEqual(self.cached(), good)

    def test_rows_with_control_characters_are_skipped_and_named(self) -> None:
        out = self.update("skypilot-aws=/control")
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        s = self.status(out)
        self.assertEqual(s["status"], "updated", s)
        self.assertGreaterEqual(s["skipped"], 1, s)
        env = dict(ENV, NUBO_CATALOG_CACHE=str(self.cache))
        rows = json.loads(run("catalog", "--provider", "aws", "--json", env=env).stdout)
        self.assertFalse(any("\r" in r["region"] for r in rows["instances"]))
        text = run("catalog", "--sources", env=env)
        self.assertNotIn("\r", text.stdout + text.stderr)

    def test_a_poisoned_row_is_skipped_and_costs_later_plans_nothing(self) -> None:
        # It once made every later plan take 34 s and 1.9 GB: read again at each load, its
        # nesting cost memory of the square of its depth.
        out = self.update("skypilot-aws=/poisoned.csv")
        self.assertEqual(self.status(out)["status"], "updated", out.stdout)
        env = dict(ENV, NUBO_CATALOG_CACHE=str(self.cache))
        plan = subprocess.run([BIN, "plan", "--params", "1B", "--tokens", "1e9", "--provider",
                               "aws"], capture_output=True, text=True, timeout=60, env=env)
        self.assertEqual(plan.returncode, 0, plan.stderr)
        self.assertIn("Prices from", plan.stdout)

    def test_azure_pages_stay_on_their_server_and_never_loop(self) -> None:
        out = self.update("azure-reserved=/azure-loop")
        s = self.status(out, "azure-reserved")
        self.assertEqual(s["status"], "failed", out.stdout)
        self.assertIn("links back to one already read", s["message"])
        out = self.update("azure-reserved=/azure-away")
        s = self.status(out, "azure-reserved")
        self.assertEqual(s["status"], "failed", out.stdout)
        self.assertIn("on another server", s["message"])
        self.assertEqual(Handler.hits, 0)

    def test_a_mirrors_password_is_used_never_kept(self) -> None:
        url = self.base.replace("http://", "http://u:s3cret@") + "/private.csv"
        args = ["catalog", "update", "--cache", str(self.cache), "--json", "--source",
                "skypilot-aws", "--url", f"skypilot-aws={url}"]
        out = run(*args)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertEqual(self.status(out)["status"], "updated")
        again = run(*args)
        self.assertEqual(self.status(again)["status"], "not modified", again.stdout)
        env = dict(ENV, NUBO_CATALOG_CACHE=str(self.cache))
        sources = run("catalog", "--sources", "--json", env=env).stdout
        # Refused URLs are named without their password too.
        bad = run("catalog", "update", "--cache", str(self.cache), "--url",
                  "skypilot-aws=ftp://u:s3cret@127.0.0.1/x.csv")
        self.assertIn("is not an http(s) URL", bad.stderr)
        for text in (out.stdout, out.stderr, again.stdout, sources, bad.stdout, bad.stderr,
                     (self.cache / "skypilot-aws.source").read_text()):
            self.assertNotIn("s3cret", text)

    def test_concurrent_updates_never_remove_each_others_files(self) -> None:
        for _ in range(3):
            procs = [subprocess.Popen(
                [BIN, "catalog", "update", "--cache", str(self.cache), "--source", "skypilot-aws",
                 "--url", f"skypilot-aws={self.base}/big.csv"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
                for _ in range(4)]
            for p in procs:
                stdout, stderr = p.communicate(timeout=120)
                self.assertEqual(p.returncode, 0, stdout + stderr)
                self.assertNotIn("cannot rename", stdout + stderr)
        self.assertEqual(self.cached()[1], BIG)
        self.assertEqual([p.name for p in self.cache.iterdir()], ["skypilot-aws.source"])

    def test_plans_read_the_cache_and_say_where_prices_came_from(self) -> None:
        self.assertEqual(self.update("skypilot-aws=/aws2.csv").returncode, 0)
        env = dict(ENV, NUBO_CATALOG_CACHE=str(self.cache))
        out = run("catalog", "--provider", "aws", "--json", env=env)
        rows = json.loads(out.stdout)["instances"]
        self.assertEqual({r["instance"] for r in rows}, {"p4d.24xlarge", "g5.xlarge"})
        self.assertEqual(next(r for r in rows if r["instance"] == "p4d.24xlarge")["on_demand"], 20.0)
        sources = json.loads(run("catalog", "--sources", "--json", env=env).stdout)["sources"]
        aws = next(s for s in sources if s["name"] == "skypilot-aws")
        self.assertTrue(aws["origin"].endswith("skypilot-aws.source"), aws)
        self.assertEqual(aws["etag"], '"v2"')
        plan = run("plan", "--params", "1B", "--tokens", "1e9", "--provider", "aws", env=env)
        self.assertIn("Prices from", plan.stdout)
        # A cache file that is not one: the embedded version answers, and says so.
        (self.cache / "skypilot-aws.source").write_text("garbage")
        out = run("catalog", "--provider", "aws", env=env)
        self.assertEqual(out.returncode, 0)
        self.assertIn("using the embedded skypilot-aws", out.stderr)

    def test_skypilots_local_catalog_is_read_when_newer(self) -> None:
        home = WORK / "home"
        shutil.rmtree(home, ignore_errors=True)
        sky = home / ".sky" / "catalogs" / "v8" / "lambda"
        sky.mkdir(parents=True)
        shutil.copy(FIXTURES / "skypilot_lambda.csv", sky / "vms.csv")
        env = dict(ENV, HOME=str(home), NUBO_CATALOG_CACHE=str(self.cache))
        rows = json.loads(run("catalog", "--provider", "lambda", "--json", env=env).stdout)
        self.assertEqual(len(rows["instances"]), 4)
        sources = json.loads(run("catalog", "--sources", "--json", env=env).stdout)["sources"]
        lam = next(s for s in sources if s["name"] == "skypilot-lambda")
        self.assertEqual(lam["origin"], str(sky / "vms.csv"))


if __name__ == "__main__":
    WORK.mkdir(parents=True, exist_ok=True)
    ENV = dict(os.environ, HOME=str(WORK / "nohome"), NUBO_CATALOG_CACHE=str(WORK / "unused"))
    ENV.pop("XDG_CACHE_HOME", None)
    unittest.main(argv=sys.argv[:1], verbosity=1)
