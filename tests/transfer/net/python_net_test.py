#!/usr/bin/env python3
"""The nubo.net Python binding, against the libnubo_c.so of this build.

Run by ctest (net:python) with PYTHONPATH=capi/python and NUBO_LIBRARY=<build>/libnubo_c.so.
Loopback only.
"""

from __future__ import annotations

import os
import tempfile
import time
import unittest
from pathlib import Path

import nubo
from nubo import net
from nubo.errors import NuboError, Status

TOKEN = "python-test-token-0123456789"


def make_tree(root: Path) -> Path:
    tree = root / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "big.bin").write_bytes(os.urandom(200_000) + b"text " * 40_000)
    (tree / "sub" / "notes.txt").write_text("hello nubo\n" * 500)
    (tree / "sub" / "same.txt").write_text("hello nubo\n" * 500)  # crosses as a copy
    (tree / "empty").write_bytes(b"")
    return tree


def wait_stats(server: net.Server, sessions: int = 0, refused: int = 0) -> net.ServerStats:
    """The server counts a session or a refusal on its own thread, right after answering the
    sender: waits (up to 5 s) for the counts to reach at least these."""
    deadline = time.monotonic() + 5
    stats = server.stats()
    while (stats.sessions < sessions or stats.refused < refused) and time.monotonic() < deadline:
        time.sleep(0.01)
        stats = server.stats()
    return stats


class SendServe(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.tree = make_tree(self.root)
        self.dest = self.root / "dest"
        self.dest.mkdir()

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def test_send_progress_summary_and_skip(self) -> None:
        seen: list[net.SendProgress] = []
        with net.Server(self.dest, token=TOKEN, timeout=10, sync=False) as server:
            self.assertGreater(server.port, 0)
            to = f"{server.address}/run"
            s = net.send([self.tree], to, token=TOKEN, streams=2, threads=2,
                         chunk_size=64 * 1024, timeout=10,
                         progress=lambda p: seen.append(p) is None)
            self.assertEqual(s.files, 4)
            total = 200_000 + 200_000 + 2 * len("hello nubo\n") * 500
            self.assertEqual(s.bytes, total)
            self.assertEqual((s.bytes_sent, s.bytes_skipped, s.bytes_resumed), (total, 0, 0))
            self.assertEqual(s.bytes_deduplicated, len("hello nubo\n") * 500)
            self.assertGreater(s.wire_bytes, 0)
            self.assertEqual(sum(s.chunks_by_codec.values()), s.chunks_sent)
            self.assertEqual(set(s.chunks_by_codec), {nubo.Codec.NONE, nubo.Codec.LZ4,
                                                      nubo.Codec.ZSTD, nubo.Codec.ZERO,
                                                      nubo.Codec.FLOAT})
            self.assertTrue(seen)
            self.assertEqual(seen[-1].bytes_done, total)
            self.assertGreater(seen[-1].wire_bytes, 0)
            self.assertGreaterEqual(seen[-1].link_rate, 0)
            self.assertEqual((self.dest / "run/tree/big.bin").read_bytes(),
                             (self.tree / "big.bin").read_bytes())
            self.assertEqual((self.dest / "run/tree/sub/notes.txt").read_text(),
                             (self.tree / "sub/notes.txt").read_text())

            again = net.send(str(self.tree), to, token=TOKEN, codec="zstd")
            self.assertEqual(again.bytes_skipped, total)
            self.assertEqual(again.bytes_sent, 0)

            stats = wait_stats(server, sessions=2)
            self.assertGreaterEqual(stats.sessions, 2)
            self.assertEqual(stats.files, 4)
            server.stop()
            server.stop()
            self.assertEqual(server.stats().files, 4)

    def test_cancel_and_callback_exception(self) -> None:
        with net.Server(self.dest, token=TOKEN, timeout=10, sync=False) as server:
            to = f"{server.address}/cancelled"
            with self.assertRaises(NuboError) as e:
                net.send(self.tree, to, token=TOKEN, streams=1, chunk_size=4096, rate=200_000,
                         progress=lambda p: False)
            self.assertEqual(e.exception.status, Status.CANCELLED)

            def boom(_: net.SendProgress) -> bool:
                raise KeyError("from the callback")

            with self.assertRaises(KeyError):
                net.send(self.tree, to, token=TOKEN, streams=1, chunk_size=4096, rate=200_000,
                         progress=boom)

    def test_wrong_token_and_bad_arguments(self) -> None:
        with net.Server(self.dest, token=TOKEN, timeout=10, sync=False) as server:
            with self.assertRaises(NuboError) as e:
                net.send(self.tree, server.address, token="wrong-token", timeout=10)
            self.assertEqual(e.exception.status, Status.INVALID_ARGUMENT)
            self.assertIn("token", str(e.exception))
            self.assertGreaterEqual(wait_stats(server, refused=1).refused, 1)
            with self.assertRaises(NuboError) as e:
                net.send(self.tree, server.address, token=TOKEN, codec="brotli")
            self.assertEqual(e.exception.status, Status.INVALID_ARGUMENT)
            with self.assertRaises(NuboError) as e:
                net.send([], server.address, token=TOKEN)
            self.assertEqual(e.exception.status, Status.INVALID_ARGUMENT)
            with self.assertRaises(NuboError):
                net.send(self.tree, "no-port", token=TOKEN)
        with self.assertRaises(NuboError) as e:
            net.Server("", token=TOKEN)
        self.assertEqual(e.exception.status, Status.INVALID_ARGUMENT)

    def test_token_as_bytes(self) -> None:
        secret = bytes(range(1, 40))  # not text: any bytes but NUL
        with net.Server(self.dest, token=secret, timeout=10, sync=False) as server:
            s = net.send(self.tree, f"{server.address}/bytes", token=bytearray(secret))
            self.assertEqual(s.files, 4)
            with self.assertRaises(NuboError) as e:
                net.send(self.tree, server.address, token=secret[:-1], timeout=10)
            self.assertIn("token", str(e.exception))
        for bad, says in ((b"", "empty"), ("", "empty"), (b"ab\0cd", "NUL"), ("ab\0", "NUL")):
            with self.assertRaises(NuboError) as e:
                net.send(self.tree, "127.0.0.1:1", token=bad)
            self.assertEqual(e.exception.status, Status.INVALID_ARGUMENT)
            self.assertIn(says, str(e.exception))
            with self.assertRaises(NuboError):
                net.Server(self.dest, token=bad)

    def test_encryption_options_and_missing_dest(self) -> None:
        with net.Server(self.dest, token=TOKEN, sync=False, require_encryption=True,
                        handshake_timeout=5) as server:
            with self.assertRaises(NuboError) as e:
                net.send(self.tree, server.address, token=TOKEN, encrypt=False)
            self.assertIn("only encrypted connections", str(e.exception))
            with self.assertRaises(NuboError) as e:
                net.send(self.tree, server.address, token=TOKEN, ca_file=self.root / "no-ca.pem")
            self.assertIn("no-ca.pem", str(e.exception))
            net.send(self.tree, f"{server.address}/ok", token=TOKEN)
            self.assertTrue((self.dest / "ok" / "tree" / "big.bin").is_file())
        missing = self.root / "missing" / "dest"
        with self.assertRaises(NuboError) as e:
            net.Server(missing, token=TOKEN)
        self.assertEqual(e.exception.status, Status.NOT_FOUND)
        self.assertIn("--mkdir", str(e.exception))
        with net.Server(missing, token=TOKEN, mkdir=True, preserve_special_modes=True):
            self.assertTrue(missing.is_dir())

    def test_package_exports_net(self) -> None:
        self.assertIs(nubo.net, net)


if __name__ == "__main__":
    unittest.main()
