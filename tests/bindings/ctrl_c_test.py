"""Ctrl-C during the long Python calls (nubo.pack, nubo.net.send, Trainer.fit), with and without
a progress callable: the call stops, KeyboardInterrupt reaches the caller (not "Exception
ignored" from inside a ctypes callback), and what was done is resumed by the next call.

Each call runs in a child interpreter that a SIGINT interrupts as a terminal's Ctrl-C would. The
work is rate-limited to last far longer than the test waits, so an interrupted call that ran
to its end is caught; the time from SIGINT to exit is printed, never asserted. Run by CTest
(bindings:python:ctrl_c)."""

import base64
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import nubo
from nubo import net

MiB = 1 << 20

# The child: announces when the call is under way, then reports how it ended. SIGINT gets
# Python's own handler even when the test runner ignores the signal.
CHILD = r"""
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
import nubo
from nubo import net
from nubo.train import Trainer

what, with_callback, a, b = sys.argv[1], sys.argv[2] == "callback", sys.argv[3], sys.argv[4]
announced = []

def progress(p):
    if not announced:
        announced.append(1)
        print("started", flush=True)
    return True

nubo.version()  # the library loaded: what follows the announcement is the call itself
if not with_callback:
    print("started", flush=True)
callback = progress if with_callback else None
try:
    if what == "pack":
        nubo.pack([a], b, codec="zstd", level=19, threads=1, chunk_size=1 << 20,
                  progress=callback)
    elif what == "send":
        net.send([a], b, token="ctrl-c-test-token-0123", codec="none", rate=4e6,
                 chunk_size=256 << 10, streams=1, progress=callback)
    else:
        Trainer(layers=(784, 16, 10), devices="cpu:1", epochs=100000, batch=32, subset=256,
                checkpoint_dir=b, checkpoint_every=1000000).fit(progress=callback)
    print("finished", flush=True)
    sys.exit(0)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
"""


def interrupt(what: str, with_callback: bool, a: str, b: str) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, what, "callback" if with_callback else "plain", a, b],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout is not None
    first = child.stdout.readline().strip()
    assert first == "started", (first, child.stderr.read() if child.stderr else "")
    time.sleep(1.5)  # well inside the call: the C side is working
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    took = time.monotonic() - sent
    label = f"{what} ({'with' if with_callback else 'without'} a progress callable)"
    assert child.returncode == 130 and out.strip() == "interrupted", (label, child.returncode,
                                                                        out, err)
    assert "Exception ignored" not in err, (label, err)
    print(f"{label}: Ctrl-C to exit {took:.2f} s")


def random_tree(root: str, files: int, size: int, text: bool = False) -> str:
    """Random bytes, or their base64 text (which zstd -19 compresses slowly, about 4 MB/s
    on one core: a pack that lasts)."""
    os.makedirs(root)
    for i in range(files):
        with open(os.path.join(root, f"part{i}.bin"), "wb") as f:
            f.write(base64.b64encode(os.urandom(size * 3 // 4)) if text else os.urandom(size))
    return root


def check_pack(work: str) -> None:
    # About 6 s in 1 MiB chunks (in 256 KiB ones zstd -19 is three times faster, and a fast
    # machine finished before the signal).
    source = random_tree(os.path.join(work, "pack-src"), 6, 4 * MiB, text=True)
    for with_callback in (False, True):
        archive = os.path.join(work, f"interrupted-{with_callback}.nubo")
        interrupt("pack", with_callback, source, archive)
        assert not os.path.exists(archive), "an interrupted pack left a half archive in place"
        s = nubo.pack([source], archive, codec="zstd", level=19, chunk_size=1 << 20)
        assert s.resumed and s.bytes_skipped > 0, s
        assert nubo.verify(archive).files == 6


def check_send(work: str) -> None:
    source = random_tree(os.path.join(work, "send-src"), 4, 4 * MiB)  # 4 s at 4 MB/s
    dest = os.path.join(work, "send-dest")
    os.makedirs(dest)
    with net.Server(dest, token="ctrl-c-test-token-0123") as server:
        for with_callback in (False, True):
            target = f"127.0.0.1:{server.port}/run-{with_callback}"
            interrupt("send", with_callback, source, target)
            s = net.send([source], target, token="ctrl-c-test-token-0123", codec="none")
            assert s.bytes_resumed + s.bytes_skipped > 0, s
            assert s.files == 4, s


def check_fit(work: str) -> None:
    from nubo.train import Trainer
    for with_callback in (False, True):
        checkpoints = os.path.join(work, f"checkpoints-{with_callback}")
        interrupt("fit", with_callback, "-", checkpoints)
        with Trainer(layers=(784, 16, 10), devices="cpu:1", epochs=100000, batch=32, subset=256,
                     checkpoint_dir=checkpoints) as t:
            assert t.resumed_from, "Ctrl-C left no checkpoint to resume from"
            assert t.steps_done > 0, t.steps_done


def main() -> int:
    work = tempfile.mkdtemp(prefix="nubo-ctrl-c-")
    try:
        check_pack(work)
        check_send(work)
        check_fit(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
