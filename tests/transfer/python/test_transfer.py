"""The transfer API from Python: pack, unpack, verify, Archive, progress and cancellation.

Run by CTest (transfer:python) with PYTHONPATH at capi/python and NUBO_LIBRARY at the build's
libnubo_c.so.
"""

from __future__ import annotations

import os
import tempfile
import unittest
from pathlib import Path

import nubo


class TransferTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix="nubo-py-xfer-")
        self.dir = Path(self.tmp.name)
        src = self.dir / "src"
        (src / "sub").mkdir(parents=True)
        (src / "a.txt").write_bytes(b"tensor gradient checkpoint " * 20000)
        (src / "sub" / "b.bin").write_bytes(os.urandom(100000))
        (src / "empty").write_bytes(b"")
        os.symlink("a.txt", src / "link")
        self.src = src

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def test_options_left_none_take_the_library_defaults(self) -> None:
        from nubo._abi import nubo_transfer_pack_options
        from nubo._options import filled
        o = filled(nubo_transfer_pack_options, "nubo_transfer_pack_options_init", level=None,
                   chunk_size=None, sync=False, exclude=["*.tmp", "x"], key_file=None)
        self.assertEqual(o.chunk_size, 4 << 20)  # PackOptions' default, stated once in C++
        self.assertEqual(o.codec, nubo.Codec.ZSTD)
        self.assertEqual((o.sync, o.resume), (0, 1))
        self.assertEqual(o.exclude_count, 2)
        self.assertEqual(o.exclude[1], b"x")
        self.assertIsNone(o.key_file)
        with self.assertRaises(TypeError) as e:
            filled(nubo_transfer_pack_options, "nubo_transfer_pack_options_init", levl=3)
        self.assertIn("levl", str(e.exception))
        s = nubo.pack(self.src, self.dir / "d.nubo")  # every option the library's
        self.assertGreater(s.chunks_by_codec[nubo.Codec.ZSTD], 0)

    def test_the_codec_table_is_the_librarys(self) -> None:
        table = {c.name: c for c in nubo.codecs()}
        self.assertEqual(table["zstd"].codec, nubo.Codec.ZSTD)
        self.assertEqual(table["zstd"].default_level, 3)
        self.assertLess(table["zstd"].min_level, 0)  # zstd's fast levels
        self.assertEqual((table["none"].min_level, table["none"].max_level), (0, 0))
        self.assertNotIn("zero", table)  # how zeros are stored, not a choice
        for name, info in table.items():  # every name offered is one the library reads
            o = nubo.transfer._pack_options(name)
            self.assertEqual(o.codec, info.codec)

    def test_round_trip_with_progress(self) -> None:
        seen: list[nubo.Progress] = []
        archive = self.dir / "x.nubo"
        s = nubo.pack(self.src, archive, codec="zstd", level=3, chunk_size=64 << 10, sync=False,
                      progress=lambda p: seen.append(p) is None)
        self.assertEqual(s.files, 3)
        self.assertEqual(s.symlinks, 1)
        self.assertLess(s.bytes_stored, s.bytes)
        self.assertGreater(s.chunks_by_codec[nubo.Codec.ZSTD], 0)
        self.assertEqual(sum(s.chunks_by_codec.values()), s.chunks)
        self.assertTrue(seen)
        self.assertEqual(seen[-1].bytes_done, seen[-1].bytes_total)
        done = [p.bytes_done for p in seen]
        self.assertEqual(done, sorted(done))

        v = nubo.verify(archive)
        self.assertEqual(v.bytes, s.bytes)
        out = self.dir / "out"
        u = nubo.unpack(archive, out, sync=False)
        self.assertEqual(u.files, 3)
        self.assertEqual((out / "src" / "a.txt").read_bytes(), (self.src / "a.txt").read_bytes())
        self.assertEqual((out / "src" / "sub" / "b.bin").read_bytes(),
                         (self.src / "sub" / "b.bin").read_bytes())
        self.assertEqual(os.readlink(out / "src" / "link"), "a.txt")

    def test_archive_difference(self) -> None:
        archive = self.dir / "d.nubo"
        first = nubo.pack(self.src, archive, chunk_size=64 << 10, sync=False)
        self.assertFalse(first.up_to_date)
        self.assertEqual(nubo.archive_difference(archive, self.src, chunk_size=64 << 10), "")
        again = nubo.pack(self.src, archive, chunk_size=64 << 10, sync=False, skip_unchanged=True)
        self.assertTrue(again.up_to_date)
        self.assertEqual((again.files, again.bytes, again.bytes_skipped, again.bytes_stored),
                         (first.files, first.bytes, first.bytes, first.bytes_stored))
        self.assertIn("its chunks are of 65536 bytes",
                      nubo.archive_difference(archive, self.src))
        self.assertIn("src/sub/b.bin' is no longer in the sources",
                      nubo.archive_difference(archive, self.src, chunk_size=64 << 10,
                                              exclude=["*.bin"]))
        (self.src / "new.txt").write_bytes(b"new")  # the directory changed first
        self.assertEqual(nubo.archive_difference(archive, self.src, chunk_size=64 << 10),
                         "'src': its modification time changed")
        with self.assertRaises(nubo.NuboError) as caught:
            nubo.archive_difference(self.dir / "none.nubo", self.src)
        self.assertEqual(caught.exception.status, nubo.Status.NOT_FOUND)

    def test_encrypted_round_trip(self) -> None:
        key, other = self.dir / "k.key", self.dir / "other.key"
        nubo.keygen(key)
        nubo.keygen(other)
        with self.assertRaises(nubo.NuboError):
            nubo.keygen(key)  # never replaced
        archive = self.dir / "x.nubo"
        nubo.pack(self.src, archive, codec="none", sync=False, key_file=key)
        self.assertNotIn(b"tensor gradient", archive.read_bytes())
        self.assertEqual(nubo.verify(archive, key_file=key).files, 3)
        names = sorted(e.path for e in nubo.list_archive(archive, key_file=key))
        self.assertIn("src/sub/b.bin", names)
        with nubo.Archive(archive, key_file=key) as a:
            self.assertEqual(a.read("src/a.txt", 0, 6), b"tensor")
        for wrong in (None, other):
            with self.assertRaises(nubo.NuboError) as caught:
                nubo.list_archive(archive, key_file=wrong)
            self.assertEqual(caught.exception.status, nubo.Status.INVALID_ARGUMENT)
            self.assertIn("encrypted", str(caught.exception))
        out = self.dir / "out"
        nubo.unpack(archive, out, sync=False, key_file=key)
        self.assertEqual((out / "src" / "a.txt").read_bytes(), (self.src / "a.txt").read_bytes())

    def test_archive_random_access(self) -> None:
        archive = self.dir / "x.nubo"
        nubo.pack([self.src], archive, codec="lz4", chunk_size=4096, sync=False)
        data = (self.src / "a.txt").read_bytes()
        with nubo.Archive(archive) as a:
            paths = [e.path for e in a]
            self.assertIn("src/a.txt", paths)
            e = a.entry("src/a.txt")
            self.assertEqual(e.kind, nubo.EntryKind.FILE)
            self.assertEqual(e.size, len(data))
            self.assertEqual(len(e.hash), 32)
            self.assertEqual(a.read("src/a.txt", 4090, 100), data[4090:4190])
            self.assertEqual(a.read("src/a.txt"), data)
            self.assertEqual(a.read("src/a.txt", len(data) + 5, 10), b"")
            with self.assertRaises(nubo.NuboError) as cm:
                a.read("missing")
            self.assertEqual(cm.exception.status, nubo.Status.NOT_FOUND)
            self.assertEqual(a.entry("src/link").link_target, "a.txt")
        self.assertEqual(len(nubo.list_archive(archive)), 6)

    def test_cancel_and_resume(self) -> None:
        archive = self.dir / "x.nubo"
        with self.assertRaises(nubo.NuboError) as cm:
            nubo.pack(self.src, archive, progress=lambda p: False)
        self.assertEqual(cm.exception.status, nubo.Status.CANCELLED)

        class Boom(Exception):
            pass

        def explode(p: nubo.Progress) -> bool:
            raise Boom()

        with self.assertRaises(Boom):
            nubo.pack(self.src, archive, progress=explode)
        s = nubo.pack(self.src, archive, sync=False)
        self.assertEqual(s.files, 3)
        nubo.verify(archive)

    def test_filters_and_special_modes(self) -> None:
        archive = self.dir / "filtered.nubo"
        s = nubo.pack(self.src, archive, exclude=["*.bin", "empty"], include=["empty"],
                      sync=False)
        self.assertEqual(s.files, 2)  # a.txt and empty: b.bin left out, empty kept back
        paths = [e.path for e in nubo.Archive(archive).entries]
        self.assertNotIn("src/sub/b.bin", paths)
        self.assertIn("src/empty", paths)
        with self.assertRaises(nubo.NuboError) as cm:
            nubo.pack(self.src, self.dir / "y.nubo", exclude=["[oops"])
        self.assertIn("--exclude pattern", str(cm.exception))
        os.chmod(self.src / "a.txt", 0o4755)
        plain = nubo.pack(self.src, self.dir / "m.nubo", sync=False)
        self.assertGreater(plain.files, 0)
        nubo.unpack(self.dir / "m.nubo", self.dir / "dropped", sync=False)
        self.assertEqual((self.dir / "dropped" / "src" / "a.txt").stat().st_mode & 0o7777, 0o755)
        nubo.unpack(self.dir / "m.nubo", self.dir / "kept", sync=False,
                    preserve_special_modes=True)
        self.assertEqual((self.dir / "kept" / "src" / "a.txt").stat().st_mode & 0o7777, 0o4755)

    def test_errors(self) -> None:
        with self.assertRaises(nubo.NuboError) as cm:
            nubo.pack(self.src, self.dir / "x.nubo", codec="gzip")
        self.assertEqual(cm.exception.status, nubo.Status.INVALID_ARGUMENT)
        self.assertIn("use auto, zstd, lz4, float or none", str(cm.exception))  # the library's list
        with self.assertRaises(nubo.NuboError):
            nubo.pack(self.src, self.dir / "x.nubo", codec="zero")  # recorded, never chosen
        with self.assertRaises(nubo.NuboError) as cm:
            nubo.pack(self.src, self.dir / "x.nubo", chunk_size=10)
        self.assertIn("chunk size", str(cm.exception))
        bad = self.dir / "bad.nubo"
        bad.write_bytes(b"not an archive" * 100)
        with self.assertRaises(nubo.NuboError) as cm:
            nubo.verify(bad)
        self.assertEqual(cm.exception.status, nubo.Status.CORRUPT)
        with self.assertRaises(nubo.NuboError) as cm:
            nubo.Archive(self.dir / "missing.nubo")
        self.assertEqual(cm.exception.status, nubo.Status.NOT_FOUND)

    def test_errors_are_the_builtin_exceptions_of_their_kind(self) -> None:
        with self.assertRaises(FileNotFoundError) as missing:
            nubo.Archive(self.dir / "missing.nubo")
        self.assertIsInstance(missing.exception, nubo.NuboError)
        self.assertIn("missing.nubo", str(missing.exception))
        with self.assertRaises(ValueError):
            nubo.pack(self.src, self.dir / "x.nubo", codec="gzip")
        bad = self.dir / "bad.nubo"
        bad.write_bytes(b"not an archive" * 100)
        with self.assertRaises(nubo.NuboError) as corrupt:
            nubo.verify(bad)
        self.assertNotIsInstance(corrupt.exception, (ValueError, OSError))
        e = nubo.NuboError(nubo.Status.TIMEOUT, "slow")
        self.assertIsInstance(e, TimeoutError)
        self.assertEqual((str(e), repr(e)), ("slow", "NuboError(TIMEOUT, 'slow')"))
        import pickle
        back = pickle.loads(pickle.dumps(e))
        self.assertIsInstance(back, TimeoutError)
        self.assertEqual((back.status, back.message), (e.status, e.message))
        self.assertIn("net", nubo.__all__)
        self.assertIn("s3", nubo.__all__)


if __name__ == "__main__":
    unittest.main()
