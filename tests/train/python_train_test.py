"""nubo.train over libnubo_c.so: a small run (1 epoch of a subset on two CPU workers), progress,
evaluate, the profile, save/load, cancellation and errors. Run by CTest (train:python)."""

import os
import shutil
import sys
import tempfile
import threading
import time
from http.server import ThreadingHTTPServer

import nubo
from nubo.interruption import Watcher
from nubo.train import Trainer

from notice_test import make_handler  # the loopback metadata service, as the clouds answer


def small(**kw):
    args = dict(layers=(784, 32, 10), devices="cpu:2", epochs=1, batch=64, subset=512,
                bucket_bytes=16 << 10)
    if os.environ.get("NUBO_TEST_DATASET_DIR"):
        args["dataset_dir"] = os.environ["NUBO_TEST_DATASET_DIR"]
    args.update(kw)
    return Trainer(**args)


def main() -> int:
    work = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()
    seen = []
    with small() as t:
        t.fit(progress=lambda p: seen.append(p) or True)
        assert len(seen) == 8 and seen[-1].step == 8 and seen[-1].loss > 0, seen[-1:]
        e = t.evaluate()
        assert e.samples == 512 and 0.2 < e.accuracy <= 1, e
        prof = t.profile()
        assert isinstance(prof, dict) and "samples_per_s" in t.profile_json(), prof
        path = os.path.join(work, "py-test.nubo")
        t.save(path)
    # Sharded, in bf16, two micro-batches a step, gradients clipped: it trains, and says so in
    # its profile.
    with small(zero_stage=2, precision="bf16", accumulate=2, max_grad_norm=1.0) as t:
        t.fit()
        assert t.evaluate().accuracy > 0.2
        model = t.profile()["model"]
        assert model["zero_stage"] == 2 and model["parameters"] == 784 * 32 + 32 + 32 * 10 + 10
        assert t.profile()["dtype"] == "bf16"
    try:
        small(zero_stage=5)
        raise AssertionError("zero_stage 5 was accepted")
    except nubo.NuboError as e:
        assert "zero_stage 5" in str(e), e

    with small(epochs=2) as t:
        t.load(path)
        assert t.steps_done == 8
        try:
            t.fit(progress=lambda p: p.step < 10)
            raise AssertionError("fit was not cancelled")
        except nubo.NuboError as x:
            assert x.status == nubo.Status.CANCELLED, x
        assert t.steps_done == 10

        def boom(p):
            raise KeyError("from the callback")
        try:
            t.fit(progress=boom)
            raise AssertionError("the callback's exception was lost")
        except KeyError:
            pass
        t.fit()
        assert t.steps_done == 16

    with small(layers=(784, 16, 10)) as t:
        try:
            t.load(path)
            raise AssertionError("a checkpoint of another model loaded")
        except nubo.NuboError as x:
            assert x.status == nubo.Status.INVALID_ARGUMENT, x

    # Checkpoints at Daly's interval: the first after the first step, then the planned one.
    auto_dir = os.path.join(work, "py-auto")
    shutil.rmtree(auto_dir, ignore_errors=True)  # left by an earlier run of this test
    seen = []
    with small(checkpoint_dir=auto_dir, checkpoint_every="auto", mtbi_s=3600) as t:
        t.fit(progress=lambda p: seen.append(p) or True)
        checkpoint = t.profile()["checkpoint"]
    assert seen[0].checkpointed and seen[0].checkpoint_interval_s == 0, seen[0]
    assert checkpoint["interval_s"] > 0 and checkpoint["time_s"] > 0, checkpoint
    assert any(f.startswith("ckpt-") for f in os.listdir(auto_dir)), os.listdir(auto_dir)
    # A trainer made on that directory continues from its newest checkpoint, unless fresh.
    with small(checkpoint_dir=auto_dir, epochs=2) as t:
        assert t.resumed_from and t.resumed_from.endswith("ckpt-0000000008.nubo"), t.resumed_from
        assert t.steps_done == 8
    with small(checkpoint_dir=auto_dir, fresh=True) as t:
        assert t.resumed_from is None and t.steps_done == 0
    try:
        small(checkpoint_dir=auto_dir, checkpoint_every="sometimes")
        raise AssertionError("checkpoint_every='sometimes' was accepted")
    except ValueError:
        pass

    # An interruption notice (GCP's format, half a second in) stops fit from the watcher's
    # thread, with a checkpoint; with no metadata service the watcher is off.
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler("gcp", 0.5, time.time()))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    os.environ["NUBO_METADATA_URL"] = f"http://127.0.0.1:{server.server_address[1]}"
    notices = []
    notice_dir = os.path.join(work, "py-notice")
    with small(checkpoint_dir=notice_dir, epochs=1000, batch=8, fresh=True) as t:
        with Watcher(lambda n: (notices.append(n), t.request_stop()), poll_seconds=0.1) as w:
            assert w.cloud == "gcp", w.cloud
            try:
                t.fit()
                raise AssertionError("the notice did not stop training")
            except nubo.NuboError as x:
                assert x.status == nubo.Status.CANCELLED, x
        assert notices and notices[0].cloud == "gcp" and notices[0].action, notices
        assert t.steps_done < 1000 * 64 and os.path.exists(
            os.path.join(notice_dir, f"ckpt-{t.steps_done:010d}.nubo")), os.listdir(notice_dir)
    server.shutdown()
    os.environ["NUBO_METADATA_URL"] = "http://127.0.0.1:1"  # nothing listens there
    with Watcher(lambda n: None) as w:
        assert w.cloud == "", w.cloud
    del os.environ["NUBO_METADATA_URL"]
    try:
        Watcher(lambda n: None, poll_seconds=0)
        raise AssertionError("poll_seconds=0 was accepted")
    except nubo.NuboError as x:
        assert x.status == nubo.Status.INVALID_ARGUMENT, x

    for bad, status in ((dict(dataset_dir="/nonexistent"), nubo.Status.NOT_FOUND),
                        (dict(devices="gpu:3"), nubo.Status.INVALID_ARGUMENT),
                        (dict(layers=(100, 10)), nubo.Status.INVALID_ARGUMENT),
                        (dict(checkpoint_dir=auto_dir, checkpoint_every="auto"),
                         nubo.Status.INVALID_ARGUMENT)):
        try:
            small(**bad)
            raise AssertionError(f"{bad} was accepted")
        except nubo.NuboError as x:
            assert x.status == status, (bad, x)
    os.remove(path)
    print("nubo.train: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
