//! nubo::net against libnubo_c.so: a loopback server, sends that arrive verified, resume after a
//! cancel, progress with a panic, tokens as bytes, and bad input of every kind.

use std::fs;
use std::path::{Path, PathBuf};

use nubo::net::{send, SendOptions, SendProgress, Server, ServerOptions, ServerStats};
use nubo::transfer::Codec;
use nubo::{ffi, Status};

const TOKEN: &[u8] = b"rust-net-test-token";

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("nubo-rust-net-{}", std::process::id()))
        .join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// A tree of four files, one of 3 MiB of varied bytes.
fn tree(root: &Path) -> PathBuf {
    let tree = root.join("tree");
    fs::create_dir_all(tree.join("sub")).unwrap();
    let big: Vec<u8> = (0..3u32 << 20)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    fs::write(tree.join("big.bin"), &big).unwrap();
    fs::write(tree.join("a.txt"), b"alpha\n").unwrap();
    fs::write(tree.join("sub/b.txt"), b"beta\n").unwrap();
    fs::write(tree.join("empty"), b"").unwrap();
    tree
}

fn server(dest: &PathBuf) -> Server {
    Server::start(&ServerOptions {
        token: Some(TOKEN.to_vec()),
        sync: Some(false),
        timeout_seconds: Some(10.0),
        ..ServerOptions::new(dest)
    })
    .unwrap()
}

/// The server's statistics once `ready` holds (it counts on its own threads, maybe after the
/// client has returned), or after 10 s, when the caller's assertion says what was wrong.
fn stats_when(server: &Server, ready: impl Fn(&ServerStats) -> bool) -> ServerStats {
    let mut stats = server.stats().unwrap();
    for _ in 0..100 {
        if ready(&stats) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        stats = server.stats().unwrap();
    }
    stats
}

fn options() -> SendOptions {
    SendOptions {
        token: Some(TOKEN.to_vec()),
        timeout_seconds: Some(10.0),
        ..Default::default()
    }
}

#[test]
fn send_arrives_verified_and_a_second_send_skips() {
    let root = scratch("send");
    let (tree, dest) = (tree(&root), root.join("dest"));
    fs::create_dir(&dest).unwrap();
    let server = server(&dest);
    let to = format!("127.0.0.1:{}/run1", server.port());
    let mut seen = Vec::new();
    let mut progress = |p: &SendProgress| {
        seen.push(p.bytes_done);
        true
    };
    let s = send(&[&tree], &to, &options(), Some(&mut progress)).unwrap();
    assert_eq!((s.files, s.bytes), (4, (3 << 20) + 11));
    assert!(s.wire_bytes > 0 && s.streams >= 1, "{s:?}");
    assert!(!seen.is_empty());
    assert_eq!(
        fs::read(dest.join("run1/tree/big.bin")).unwrap(),
        fs::read(tree.join("big.bin")).unwrap()
    );
    let again = send(&[&tree], &to, &options(), None).unwrap();
    assert_eq!((again.bytes_sent, again.bytes_skipped), (0, s.bytes));
    let stats = stats_when(&server, |s| s.sessions >= 2);
    assert!(stats.sessions >= 2 && stats.files == 4, "{stats:?}");
}

#[test]
fn cancel_resumes_and_a_panic_crosses_back() {
    let root = scratch("cancel");
    let (tree, dest) = (tree(&root), root.join("dest"));
    fs::create_dir(&dest).unwrap();
    let server = server(&dest);
    let to = format!("127.0.0.1:{}/run", server.port());
    let slow = SendOptions {
        streams: Some(1),
        chunk_size: Some(64 << 10),
        rate: Some(2e6),
        codec: Some(Codec::None),
        ..options()
    };
    let mut stop = |p: &SendProgress| p.bytes_done < (1 << 20);
    let e = send(&[&tree], &to, &slow, Some(&mut stop)).unwrap_err();
    assert_eq!(e.status, Status::Cancelled);
    // The same chunking finds the chunks the cancelled attempt had verified.
    let again = SendOptions {
        rate: None,
        ..slow.clone()
    };
    let resumed = send(&[&tree], &to, &again, None).unwrap();
    assert!(resumed.bytes_resumed > 0, "{resumed:?}");

    let caught = std::panic::catch_unwind(|| {
        let mut boom = |_: &SendProgress| -> bool { panic!("from the callback") };
        let _ = send(
            &[&tree],
            &format!("127.0.0.1:{}/panic", server.port()),
            &slow,
            Some(&mut boom),
        );
    });
    assert!(caught.is_err(), "the callback's panic was lost");
}

#[test]
fn bad_tokens_destinations_and_options() {
    let root = scratch("bad");
    let (tree, dest) = (tree(&root), root.join("dest"));
    fs::create_dir(&dest).unwrap();
    let mut server = server(&dest);
    let to = format!("127.0.0.1:{}", server.port());

    let wrong = SendOptions {
        token: Some(b"not-the-token".to_vec()),
        ..options()
    };
    let e = send(&[&tree], &to, &wrong, None).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument);
    assert!(e.message.contains("token"), "{e}");
    // (Counted only while the server runs: once it is stopping, every failure is the stop's.)
    let stats = stats_when(&server, |s| s.refused >= 1);
    assert!(stats.refused >= 1, "{stats:?}");
    for bad in [Vec::new(), b"ab\0cd".to_vec()] {
        let o = SendOptions {
            token: Some(bad),
            ..options()
        };
        assert_eq!(
            send(&[&tree], &to, &o, None).unwrap_err().status,
            Status::InvalidArgument
        );
    }
    let no_port = send(&[&tree], "no-port", &options(), None).unwrap_err();
    assert_eq!(no_port.status, Status::InvalidArgument);
    let missing = send(&[root.join("missing")], &to, &options(), None).unwrap_err();
    assert_eq!(missing.status, Status::NotFound);
    let none: [&str; 0] = [];
    assert_eq!(
        send(&none, &to, &options(), None).unwrap_err().status,
        Status::InvalidArgument
    );
    let streams = SendOptions {
        streams: Some(0),
        ..options()
    };
    assert_eq!(
        send(&[&tree], &to, &streams, None).unwrap_err().status,
        Status::InvalidArgument
    );

    server.stop().unwrap();
    server.stop().unwrap();
    let closed = send(&[&tree], &to, &options(), None).unwrap_err();
    assert_eq!(closed.status, Status::Unavailable, "{closed}");

    let absent = Server::start(&ServerOptions {
        token: Some(TOKEN.to_vec()),
        ..ServerOptions::new(root.join("no/such/dest"))
    })
    .err()
    .unwrap();
    assert_eq!(absent.status, Status::NotFound);
    assert!(absent.message.contains("--mkdir"), "{absent}");
    let made = Server::start(&ServerOptions {
        token: Some(TOKEN.to_vec()),
        mkdir: true,
        ..ServerOptions::new(root.join("made/dest"))
    });
    assert!(made.is_ok() && root.join("made/dest").is_dir());
    let listen = Server::start(&ServerOptions {
        token: Some(TOKEN.to_vec()),
        listen: Some("not an address".into()),
        ..ServerOptions::new(&dest)
    })
    .err()
    .unwrap();
    assert_eq!(listen.status, Status::InvalidArgument);
}

#[test]
fn raw_abi_refuses_null_handles() {
    unsafe {
        assert_eq!(ffi::nubo_net_server_port(std::ptr::null()), 0);
        let mut stats = ffi::nubo_net_server_stats_info::new();
        assert_eq!(
            ffi::nubo_net_server_stats(std::ptr::null(), &mut stats),
            ffi::NUBO_ERR_INVALID_ARGUMENT
        );
        let mut server = std::ptr::null_mut();
        assert_eq!(
            ffi::nubo_net_server_start(std::ptr::null(), &mut server),
            ffi::NUBO_ERR_INVALID_ARGUMENT
        );
        ffi::nubo_net_server_free(std::ptr::null_mut());
    }
}

#[test]
fn server_crosses_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Server>();
    let root = scratch("threads");
    let (tree, dest) = (tree(&root), root.join("dest"));
    fs::create_dir(&dest).unwrap();
    let server = server(&dest);
    std::thread::scope(|s| {
        for run in 0..2 {
            let (server, tree) = (&server, &tree);
            s.spawn(move || {
                let to = format!("127.0.0.1:{}/t{run}", server.port());
                send(&[tree], &to, &options(), None).unwrap();
                server.stats().unwrap();
            });
        }
    });
    // Both trees arrived whole.
    for run in 0..2 {
        assert_eq!(
            fs::read(dest.join(format!("t{run}/tree/big.bin"))).unwrap(),
            fs::read(tree.join("big.bin")).unwrap()
        );
    }
    let stats = stats_when(&server, |s| s.files == 8);
    assert_eq!(stats.files, 8, "{stats:?}");
}
