#!/usr/bin/env python3
"""nubo.copy() and nubo.s3.copy() against the loopback S3 server (as s3:// and gs://) and a
file:// store (run by with_s3_server.py, with moto's venv
python, PYTHONPATH=capi/python and NUBO_LIBRARY=<build>/libnubo_c.so)."""
import json
import os
import tempfile
import unittest
from pathlib import Path

import boto3

import nubo
from nubo import s3, transfer
from nubo.errors import NuboError, Status


class Copy(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        if not os.environ.get("NUBO_S3_TEST_SERVER"):
            raise RuntimeError("run me through with_s3_server.py")
        boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"]).create_bucket(
            Bucket="py-bucket")

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def test_tree_round_trip_with_progress_and_filters(self) -> None:
        tree = self.dir / "tree"
        (tree / "sub").mkdir(parents=True)
        (tree / "big.bin").write_bytes(os.urandom(6_000_000))
        (tree / "sub" / "a.txt").write_text("hello\n")
        (tree / "sub" / "skip.tmp").write_text("x")
        seen = []
        up = s3.copy(tree, "s3://py-bucket/t/", exclude=["*.tmp"],
                     progress=lambda p: seen.append(p.bytes_done) or True)
        self.assertEqual(up.files, 2)
        self.assertEqual(up.bytes_sent + up.bytes_resumed, up.bytes)
        self.assertTrue(seen)
        down = s3.copy("s3://py-bucket/t/", self.dir / "out", sync=False)
        self.assertEqual(down.files, 2)
        self.assertEqual((self.dir / "out" / "tree" / "big.bin").read_bytes(),
                         (tree / "big.bin").read_bytes())
        self.assertFalse((self.dir / "out" / "tree" / "sub" / "skip.tmp").exists())

    def test_encrypted_round_trip(self) -> None:
        key = self.dir / "k.key"
        nubo.keygen(key)
        (self.dir / "secret.txt").write_text("a secret line\n")
        s3.copy(self.dir / "secret.txt", "s3://py-bucket/sealed/", key_file=key)
        body = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"]).get_object(
            Bucket="py-bucket", Key="sealed/secret.txt")["Body"].read()
        self.assertNotIn(b"secret", body)
        s3.copy("s3://py-bucket/sealed/secret.txt", self.dir / "back.txt", key_file=key)
        self.assertEqual((self.dir / "back.txt").read_text(), "a secret line\n")
        with self.assertRaises(NuboError) as e:
            s3.copy("s3://py-bucket/sealed/secret.txt", self.dir / "nokey.txt")
        self.assertEqual(e.exception.status, Status.INVALID_ARGUMENT)
        self.assertIn("--key", str(e.exception))

    def test_an_archive_under_a_kms_key(self) -> None:
        kms = boto3.client("kms", endpoint_url=os.environ["AWS_ENDPOINT_URL"],
                           region_name="us-east-1")
        arn = kms.create_key()["KeyMetadata"]["Arn"]
        src = self.dir / "src"
        src.mkdir()
        (src / "plans.txt").write_text("secret plans\n")
        transfer.pack(src, "s3://py-bucket/kms.nubo", key_file="kms:" + arn, sync=False)
        # Read back with no key given: the archive names its KMS key.
        transfer.unpack("s3://py-bucket/kms.nubo", self.dir / "out", sync=False)
        self.assertEqual((self.dir / "out" / "src" / "plans.txt").read_text(), "secret plans\n")
        # A pack under KMS cancelled halfway resumes under the same key: KMS unwraps the
        # partial archive's key again.
        (src / "big.bin").write_bytes(os.urandom(16_000_000))
        local = self.dir / "local.nubo"
        # Slow enough (one thread, zstd -12 of random bytes) for the progress to be called.
        slow = dict(key_file="kms:" + arn, chunk_size=1 << 20, threads=1, level=12, sync=False)
        with self.assertRaises(NuboError) as cancelled:
            transfer.pack(src, local, progress=lambda p: p.bytes_done == 0, **slow)
        self.assertEqual(cancelled.exception.status, Status.CANCELLED)
        resumed = transfer.pack(src, local, **slow)
        self.assertTrue(resumed.resumed)
        transfer.unpack(local, self.dir / "again", sync=False)
        self.assertEqual((self.dir / "again" / "src" / "big.bin").read_bytes(),
                         (src / "big.bin").read_bytes())
        with self.assertRaises(NuboError) as e:
            transfer.pack(src, self.dir / "x.nubo", key_file="kms:arn:aws:kms:nowhere")
        self.assertEqual(e.exception.status, Status.INVALID_ARGUMENT)
        self.assertIn("not a KMS key", str(e.exception))

    def test_errors(self) -> None:
        with self.assertRaises(NuboError) as e:
            s3.copy(self.dir / "a", self.dir / "b")
        self.assertEqual(e.exception.status, Status.INVALID_ARGUMENT)
        with self.assertRaises(NuboError) as e:
            s3.copy("s3://py-bucket/missing", self.dir / "m")
        self.assertEqual(e.exception.status, Status.NOT_FOUND)
        with self.assertRaises(NuboError) as e:
            s3.copy(self.dir, "s3://py-bucket/x/", streams=0)
        self.assertIn("streams", str(e.exception))

    def test_a_copy_between_buckets_is_made_by_the_store(self) -> None:
        client = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"])
        client.create_bucket(Bucket="py-copies")
        (self.dir / "c.bin").write_bytes(os.urandom(300_000))
        nubo.copy(self.dir / "c.bin", "s3://py-bucket/c/", sync=False)
        s = nubo.copy("s3://py-bucket/c/", "s3://py-copies/backup/")
        self.assertEqual((s.files, s.bytes_sent, s.bytes_server_side), (1, 0, 300_000))
        body = client.get_object(Bucket="py-copies", Key="backup/c.bin")["Body"].read()
        self.assertEqual(body, (self.dir / "c.bin").read_bytes())
        with self.assertRaises(nubo.NuboError) as e:
            nubo.copy("s3://py-bucket/c/", "s3://py-copies/x/", source_profile="nosuch")
        self.assertIn("nosuch", str(e.exception))

    def test_a_second_sync_moves_nothing(self) -> None:
        tree = self.dir / "synced"
        (tree / "d").mkdir(parents=True)
        (tree / "a.bin").write_bytes(os.urandom(1000))
        (tree / "d" / "b.bin").write_bytes(os.urandom(2000))
        first = nubo.sync(tree, "s3://py-bucket/synced/")
        self.assertEqual((first.copied, first.unchanged, first.bytes_copied), (2, 0, 3000))
        again = nubo.sync(tree, "s3://py-bucket/synced/")
        self.assertEqual((again.copied, again.unchanged, again.bytes_sent), (0, 2, 0))
        (tree / "a.bin").unlink()
        changes: list[str] = []
        dry = nubo.sync(tree, "s3://py-bucket/synced/", delete=True, dry_run=True,
                        on_change=changes.append)
        self.assertEqual((dry.copied, dry.deleted), (0, 1))
        self.assertEqual(changes, ["delete a.bin"])

        def refuse(change: str) -> None:
            raise KeyError(change)

        with self.assertRaises(KeyError):  # the callback's own error, once the sync returns
            nubo.sync(tree, "s3://py-bucket/synced/", delete=True, dry_run=True, on_change=refuse)
        with self.assertRaises(nubo.NuboError) as e:
            nubo.sync(tree, self.dir / "elsewhere")
        self.assertIn("rsync", str(e.exception))

    def test_the_policy_of_some_operations(self) -> None:
        policy = json.loads(nubo.access_policy("s3://py-bucket/run1/", ["checkpoint"]))
        actions = {a for s in policy["Statement"] for a in s["Action"]}
        self.assertIn("s3:DeleteObject", actions)
        self.assertIn("s3:ListBucket", actions)
        self.assertEqual(policy["Statement"][0]["Resource"], ["arn:aws:s3:::py-bucket/run1/*"])
        with self.assertRaises(nubo.NuboError) as e:
            nubo.access_policy(["s3://py-bucket/"], ["cp", "kms:not-an-arn"])
        self.assertIn("'not-an-arn' is not a KMS key ARN", str(e.exception))

    def test_every_store_through_the_neutral_copy(self) -> None:
        self.assertTrue(nubo.is_store_url("gs://b/k"))
        self.assertTrue(nubo.is_store_url("file:///tmp/x"))
        self.assertFalse(nubo.is_store_url(self.dir))
        boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"]).create_bucket(
            Bucket="py-gs")
        (self.dir / "f.bin").write_bytes(os.urandom(200_000))
        for place in ("s3://py-bucket/n/", "gs://py-gs/n/", f"file://{self.dir}/store/"):
            with self.subTest(place=place):
                up = nubo.copy(self.dir / "f.bin", place, sync=False, journal_dir=self.dir / "j")
                self.assertEqual((up.files, up.bytes), (1, 200_000))
                down = nubo.copy(place + "f.bin", self.dir / "back.bin", sync=False)
                self.assertEqual(down.bytes, 200_000)
                self.assertEqual((self.dir / "back.bin").read_bytes(),
                                 (self.dir / "f.bin").read_bytes())
        with self.assertRaises(NuboError) as e:
            nubo.copy(self.dir / "f.bin", "gs://py-gs/x/", server_side_encryption="AES256")
        self.assertIn("S3's", str(e.exception))
        with self.assertRaises(NuboError) as e:
            nubo.copy(f"file://{self.dir}/nowhere/", self.dir / "x")
        self.assertEqual(e.exception.status, Status.NOT_FOUND)

    def test_links_and_the_guards_of_a_sync(self) -> None:
        tree = self.dir / "tree"
        tree.mkdir()
        (tree / "a.txt").write_text("a")
        os.symlink("a.txt", tree / "link")
        store = f"file://{self.dir}/links/"
        s = nubo.copy(tree, store, sync=False)
        self.assertEqual((s.files, s.links_followed, s.links_skipped), (2, 1, 0))
        s = nubo.copy(tree, store, sync=False, symlinks="skip")
        self.assertEqual((s.files, s.links_skipped), (1, 1))
        s = nubo.copy(tree, f"file://{self.dir}/stored/", symlinks=nubo.Symlinks.STORE)
        self.assertEqual(s.links_stored, 1)
        with self.assertRaises(ValueError):
            nubo.copy(tree, store, symlinks="sideways")
        empty = self.dir / "empty"
        empty.mkdir()
        with self.assertRaises(NuboError) as e:
            nubo.sync(empty, store, delete=True)
        self.assertIn("holds nothing", str(e.exception))
        with self.assertRaises(NuboError) as e:
            nubo.sync(tree, f"file://{tree}/inner/")
        self.assertIn("overlap", str(e.exception))
        # A rate of -1 or NaN once meant "no limit" to a sync (copy refused it): refused alike.
        for rate in (-1.0, float("nan")):
            with self.assertRaises(NuboError) as e:
                nubo.sync(tree, store, rate=rate)
            self.assertIn("give bytes per second", str(e.exception))
        synced = f"file://{self.dir}/synced/"
        nubo.sync(tree, synced, delete=True)
        (self.dir / "synced" / "extra.txt").write_text("x")
        with self.assertRaises(NuboError) as e:
            nubo.sync(tree, synced, delete=True, max_delete=0)
        self.assertIn("max_delete", str(e.exception))
        self.assertTrue((self.dir / "synced" / "extra.txt").exists())
        s = nubo.sync(tree, synced, delete=True, backup_dir=f"file://{self.dir}/bk/")
        self.assertEqual((s.deleted, s.backed_up), (1, 1))
        self.assertEqual((self.dir / "bk" / "extra.txt").read_text(), "x")

    def test_pack_to_a_bucket_and_back(self) -> None:
        src = self.dir / "src"
        src.mkdir()
        (src / "a.bin").write_bytes(os.urandom(100_000))
        packed = transfer.pack(src, "s3://py-bucket/p.nubo", keep_partial=True, sync=False)
        self.assertEqual(packed.bytes_transferred, packed.bytes_stored)
        self.assertGreaterEqual(packed.network_wait_seconds, 0)
        self.assertLessEqual(packed.network_wait_seconds, packed.seconds)
        unpacked = transfer.unpack("s3://py-bucket/p.nubo", self.dir / "out", sync=False)
        self.assertGreater(unpacked.network_wait_seconds, 0)  # every range came from the server
        self.assertEqual((self.dir / "out" / "src" / "a.bin").read_bytes(),
                         (src / "a.bin").read_bytes())


if __name__ == "__main__":
    unittest.main()
