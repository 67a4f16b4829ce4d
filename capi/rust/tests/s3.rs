//! nubo::copy and nubo::s3::copy against libnubo_c.so: bad input and a file:// store always; with a real S3-compatible server when
//! NUBO_S3_TEST_SERVER is set (CTest s3:rust runs this under tests/transfer/store/s3/with_s3_server.py): a tree
//! up and down, verified, with progress, a cancel that resumes, and client-side encryption.

use std::fs;
use std::path::{Path, PathBuf};

use nubo::s3::{copy, CopyOptions};
use nubo::transfer::{keygen, Progress};
use nubo::Status;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("nubo-rust-s3-{}", std::process::id()))
        .join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn server() -> Option<String> {
    let endpoint = std::env::var("NUBO_S3_TEST_SERVER").ok();
    let required = std::env::var_os("NUBO_TEST_REQUIRE_S3").is_some();
    assert!(
        endpoint.is_some() || !required,
        "NUBO_TEST_REQUIRE_S3 but no server"
    );
    if endpoint.is_none() {
        eprintln!("NUBO_S3_TEST_SERVER is not set: the transfers are skipped (CTest s3:rust)");
    }
    endpoint
}

/// Creates a bucket on the test server with the one HTTP request it takes (no client library).
fn make_bucket(endpoint: &str, bucket: &str) {
    use std::io::{Read, Write};
    let address = endpoint.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(
        stream,
        "PUT /{bucket} HTTP/1.1\r\nHost: {address}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

fn tree(root: &Path) -> PathBuf {
    let tree = root.join("tree");
    fs::create_dir_all(tree.join("sub")).unwrap();
    let big: Vec<u8> = (0..12u32 << 20)
        .map(|i| (i.wrapping_mul(2654435761) >> 11) as u8)
        .collect();
    fs::write(tree.join("big.bin"), big).unwrap();
    fs::write(tree.join("sub/small.txt"), b"small\n").unwrap();
    tree
}

#[test]
fn bad_urls_and_options() {
    let dir = scratch("bad");
    let both_local = copy(&dir, dir.join("x"), &CopyOptions::default(), None).unwrap_err();
    assert_eq!(both_local.status, Status::InvalidArgument);
    assert!(both_local.message.contains("s3://"), "{both_local}");
    let streams = CopyOptions {
        streams: Some(0),
        ..Default::default()
    };
    let e = copy(&dir, "s3://bucket/k", &streams, None).unwrap_err();
    assert!(e.message.contains("streams"), "{e}");
    let e = copy("a\0b", "s3://bucket/k", &CopyOptions::default(), None).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument);
    // Named before any credentials are looked for (this test runs without any).
    let e = copy("s3://", &dir, &CopyOptions::default(), None).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{e}");
    assert!(e.message.contains("no bucket"), "{e}");
}

#[test]
fn the_policy_of_some_operations() {
    let policy = nubo::access_policy(
        &["s3://bucket/run1/".into()],
        &["pack".into(), "unpack".into()],
    )
    .unwrap();
    assert!(
        policy.contains("\"arn:aws:s3:::bucket/run1/*\""),
        "{policy}"
    );
    assert!(policy.contains("s3:PutObject"), "{policy}");
    assert!(!policy.contains("s3:ListBucket"), "{policy}");
    let e = nubo::access_policy(&["gs://bucket/x".into()], &["pack".into()]).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{e}");
    assert!(e.message.contains("s3://"), "{e}");
}

#[test]
fn a_tree_through_a_file_store_with_the_store_neutral_copy() {
    let root = scratch("file-store");
    let tree = tree(&root);
    assert!(nubo::is_store_url("file:///tmp/x"));
    assert!(nubo::is_store_url("gs://bucket/k"));
    assert!(!nubo::is_store_url("/tmp/x"));
    assert!(!nubo::is_store_url("s3://b\0/k"));
    let store = format!("file://{}/store/", root.display());
    let options = nubo::stores::CopyOptions {
        part_size: Some(5 << 20),
        sync: Some(false),
        ..Default::default()
    };
    let up = nubo::copy(&tree, &store, &options, None).unwrap();
    assert_eq!(up.files, 2);
    assert!(up.parts > 2, "{up:?}"); // the big file went up in parts
    let down = root.join("down");
    let s = nubo::copy(&store, &down, &options, None).unwrap();
    assert_eq!((s.files, s.bytes), (2, up.bytes));
    assert_eq!(
        fs::read(down.join("tree/big.bin")).unwrap(),
        fs::read(tree.join("big.bin")).unwrap()
    );
    let missing = format!("file://{}/no/such/dir/", root.display());
    let e = nubo::copy(&missing, root.join("x"), &options, None).unwrap_err();
    assert_eq!(e.status, Status::NotFound, "{e}");
    // A symlink in the tree: followed by default, counted; skipped when asked, counted.
    std::os::unix::fs::symlink("big.bin", tree.join("link.bin")).unwrap();
    let followed = nubo::copy(&tree, &store, &options, None).unwrap();
    assert_eq!(
        (followed.files, followed.links_followed),
        (3, 1),
        "{followed:?}"
    );
    let skip = nubo::stores::CopyOptions {
        symlinks: Some(nubo::stores::Symlinks::Skip),
        ..options.clone()
    };
    let skipped = nubo::copy(&tree, &store, &skip, None).unwrap();
    assert_eq!(
        (skipped.files, skipped.links_skipped),
        (2, 1),
        "{skipped:?}"
    );
}

#[test]
fn a_tree_up_and_down_with_a_cancel_that_resumes() {
    // (match, not let-else: the crate builds with Rust 1.63)
    let endpoint = match server() {
        Some(endpoint) => endpoint,
        None => return,
    };
    make_bucket(&endpoint, "rust-tree");
    let root = scratch("tree");
    let tree = tree(&root);
    let small_parts = CopyOptions {
        part_size: Some(5 << 20),
        streams: Some(1),
        keep_partial: true,
        ..Default::default()
    };
    let mut stop = |p: &Progress| p.bytes_done < (5 << 20);
    let e = copy(&tree, "s3://rust-tree/up/", &small_parts, Some(&mut stop)).unwrap_err();
    assert_eq!(e.status, Status::Cancelled);
    let mut calls = 0;
    let mut count = |_: &Progress| {
        calls += 1;
        true
    };
    let up = copy(&tree, "s3://rust-tree/up/", &small_parts, Some(&mut count)).unwrap();
    assert_eq!(up.files, 2);
    assert!(up.bytes_resumed > 0, "{up:?}");
    assert!(calls > 0);

    let down = root.join("down");
    let s = copy("s3://rust-tree/up/", &down, &CopyOptions::default(), None).unwrap();
    assert_eq!((s.files, s.bytes), (2, up.bytes));
    assert_eq!(
        fs::read(down.join("tree/big.bin")).unwrap(),
        fs::read(tree.join("big.bin")).unwrap()
    );
    // An empty prefix copies nothing, as `aws s3 cp --recursive` does; a missing object or
    // bucket is NotFound.
    let empty = copy(
        "s3://rust-tree/none/",
        root.join("none"),
        &CopyOptions::default(),
        None,
    );
    assert_eq!(empty.unwrap().files, 0);
    for missing in ["s3://rust-tree/none.bin", "s3://no-such-bucket-nubo/k"] {
        let e = copy(missing, root.join("x"), &CopyOptions::default(), None).unwrap_err();
        assert_eq!(e.status, Status::NotFound, "{missing}: {e}");
    }

    // Between two buckets of one store: copied by the store itself, nothing through here.
    make_bucket(&endpoint, "rust-backup");
    let backup = nubo::copy(
        "s3://rust-tree/up/",
        "s3://rust-backup/nightly/",
        &nubo::stores::CopyOptions::default(),
        None,
    )
    .unwrap();
    assert_eq!((backup.files, backup.bytes_sent), (2, 0), "{backup:?}");
    assert_eq!(backup.bytes_server_side, up.bytes);
    let other_profile = nubo::stores::CopyOptions {
        s3: nubo::stores::S3Options {
            source_profile: Some("nosuch".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    let e = nubo::copy(
        "s3://rust-tree/up/",
        "s3://rust-backup/x/",
        &other_profile,
        None,
    )
    .unwrap_err();
    assert!(e.message.contains("nosuch"), "{e}");

    // A sync of the same prefix again moves nothing.
    let again = nubo::sync(
        "s3://rust-tree/up/",
        "s3://rust-backup/nightly/",
        &Default::default(),
    )
    .unwrap();
    assert_eq!((again.copied, again.unchanged), (0, 2), "{again:?}");
    // A dry run into an empty prefix lists what it would copy.
    let mut changes = Vec::new();
    let dry = nubo::stores::SyncOptions {
        dry_run: Some(true),
        ..Default::default()
    };
    let planned =
        nubo::stores::sync_with("s3://rust-tree/up/", "s3://rust-backup/fresh/", &dry, |c| {
            changes.push(c.to_string())
        })
        .unwrap();
    assert_eq!(planned.copied, 2, "{planned:?}");
    changes.sort();
    assert_eq!(changes.len(), 2, "{changes:?}");
    assert!(
        changes.iter().all(|c| c.starts_with("copy ")),
        "{changes:?}"
    );
}

#[test]
fn encrypted_objects_need_their_key() {
    // (match, not let-else: the crate builds with Rust 1.63)
    let endpoint = match server() {
        Some(endpoint) => endpoint,
        None => return,
    };
    make_bucket(&endpoint, "rust-sealed");
    let root = scratch("sealed");
    let tree = tree(&root);
    let key = root.join("key");
    keygen(&key).unwrap();
    let sealed = CopyOptions {
        key_file: Some(key.clone()),
        ..Default::default()
    };
    copy(&tree, "s3://rust-sealed/t/", &sealed, None).unwrap();
    let without = copy(
        "s3://rust-sealed/t/",
        root.join("no-key"),
        &CopyOptions::default(),
        None,
    );
    assert!(without.is_err());
    copy("s3://rust-sealed/t/", root.join("with-key"), &sealed, None).unwrap();
    assert_eq!(
        fs::read(root.join("with-key/tree/sub/small.txt")).unwrap(),
        b"small\n"
    );
}
