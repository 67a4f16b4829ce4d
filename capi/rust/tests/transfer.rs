//! Archives from Rust: pack, list, read at random, verify and unpack a tree; a progress callback
//! that cancels (and one that panics); encryption with and without the key; and the errors bad
//! input gets, against this build's libnubo_c.so.

use std::fs;
use std::path::PathBuf;

use nubo::transfer::{self, Archive, Codec, EntryKind, PackOptions, UnpackOptions, VerifyOptions};
use nubo::Status;

/// A fresh directory of its own under the system's temporary folder, removed at the end.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("nubo-rust-{}-{}", name, std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn tree(dir: &TempDir) -> PathBuf {
    let src = dir.0.join("src");
    fs::create_dir_all(src.join("sub")).unwrap();
    fs::write(src.join("hello.txt"), b"hello, archive\n").unwrap();
    let big: Vec<u8> = (0..3_000_000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    fs::write(src.join("sub/big.bin"), &big).unwrap();
    std::os::unix::fs::symlink("hello.txt", src.join("link")).unwrap();
    src
}

#[test]
fn the_codec_table_is_the_librarys() {
    let table = transfer::codecs().unwrap();
    let zstd = table
        .iter()
        .find(|c| c.name == "zstd")
        .expect("zstd is offered");
    assert_eq!((zstd.codec, zstd.default_level), (Codec::Zstd, 3));
    assert!(table.iter().all(|c| c.name != "zero"), "{table:?}");
    for c in &table {
        assert_eq!(Codec::parse(&c.name).unwrap(), c.codec, "{c:?}");
    }
}

#[test]
fn a_tree_is_packed_listed_read_verified_and_unpacked() {
    let dir = TempDir::new("roundtrip");
    let src = tree(&dir);
    let archive = dir.0.join("t.nubo");
    let mut calls = 0;
    let mut count = |_: &transfer::Progress| {
        calls += 1;
        true
    };
    let options = PackOptions {
        codec: Some(Codec::Zstd),
        chunk_size: Some(1 << 20),
        ..Default::default()
    };
    let packed = transfer::pack(&[&src], &archive, &options, Some(&mut count)).unwrap();
    assert!(calls > 0);
    assert_eq!(packed.files, 2);
    assert_eq!(packed.symlinks, 1);
    assert_eq!(packed.bytes, 3_000_000 + 15);
    // A local archive: nothing waited on the network.
    assert_eq!(packed.network_wait_seconds, 0.0);
    // Every chunk counted in the slot of how it was stored; Auto, a choice, never.
    assert_eq!(packed.chunks_by_codec.total(), packed.chunks);
    assert_eq!(packed.chunks_by_codec[Codec::Auto], 0);
    assert!(packed.chunks_by_codec[Codec::Zstd] + packed.chunks_by_codec[Codec::None] > 0);

    let opened = Archive::open(&archive, None).unwrap();
    let entries = opened.entries().unwrap();
    let big = entries
        .iter()
        .find(|e| e.path == "src/sub/big.bin")
        .expect("big.bin listed");
    assert_eq!(big.kind, EntryKind::File);
    assert_eq!(big.size, 3_000_000);
    assert_eq!(big.hash.len(), 32);
    let link = entries.iter().find(|e| e.path == "src/link").unwrap();
    assert_eq!(
        (link.kind, link.link_target.as_str()),
        (EntryKind::Symlink, "hello.txt")
    );
    assert_eq!(opened.read("src/hello.txt").unwrap(), b"hello, archive\n");
    let mut middle = [0u8; 100];
    assert_eq!(
        opened
            .read_at("src/sub/big.bin", 2_000_000, &mut middle)
            .unwrap(),
        100
    );
    assert_eq!(
        &middle[..],
        &fs::read(src.join("sub/big.bin")).unwrap()[2_000_000..2_000_100]
    );
    assert_eq!(opened.find("nope").unwrap(), None);
    assert_eq!(opened.read("nope").unwrap_err().status, Status::NotFound);

    let verified = transfer::verify(&archive, &VerifyOptions::default(), None).unwrap();
    assert_eq!(verified.bytes, packed.bytes);
    let out = dir.0.join("out");
    let options = UnpackOptions {
        sync: Some(false),
        ..Default::default()
    };
    transfer::unpack(&archive, &out, &options, None).unwrap();
    assert_eq!(
        fs::read(out.join("src/sub/big.bin")).unwrap(),
        fs::read(src.join("sub/big.bin")).unwrap()
    );
}

#[test]
fn an_archive_is_up_to_date_with_its_sources_until_they_change() {
    let dir = TempDir::new("difference");
    let src = tree(&dir);
    let archive = dir.0.join("d.nubo");
    let options = PackOptions {
        chunk_size: Some(1 << 20),
        ..Default::default()
    };
    let first = transfer::pack(&[&src], &archive, &options, None).unwrap();
    assert!(!first.up_to_date);
    assert_eq!(
        transfer::archive_difference(&archive, &[&src], &options).unwrap(),
        ""
    );
    let skipping = PackOptions {
        skip_unchanged: Some(true),
        ..options.clone()
    };
    let again = transfer::pack(&[&src], &archive, &skipping, None).unwrap();
    assert!(again.up_to_date);
    assert_eq!(again.bytes_stored, first.bytes_stored);
    fs::write(src.join("hello.txt"), b"hello, changed archive\n").unwrap();
    let why = transfer::archive_difference(&archive, &[&src], &options).unwrap();
    assert!(why.contains("src/hello.txt': its size changed"), "{why}");
    let missing = transfer::archive_difference(dir.0.join("none.nubo"), &[&src], &options);
    assert_eq!(missing.unwrap_err().status, Status::NotFound);
}

#[test]
fn the_archive_handle_is_read_from_several_threads() {
    let dir = TempDir::new("threads");
    let src = tree(&dir);
    let archive = dir.0.join("t.nubo");
    transfer::pack(&[&src], &archive, &PackOptions::default(), None).unwrap();
    let opened = Archive::open(&archive, None).unwrap();
    let expected = fs::read(src.join("sub/big.bin")).unwrap();
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| assert_eq!(opened.read("src/sub/big.bin").unwrap(), expected));
        }
    });
}

#[test]
fn a_progress_callback_cancels_and_a_panicking_one_is_resumed_after_the_call() {
    let dir = TempDir::new("cancel");
    let src = tree(&dir);
    let archive = dir.0.join("t.nubo");
    let mut stop = |_: &transfer::Progress| false;
    let e =
        transfer::pack(&[&src], &archive, &PackOptions::default(), Some(&mut stop)).unwrap_err();
    assert_eq!(e.status, Status::Cancelled, "{}", e.message);
    // Resumable: the same call finishes it.
    transfer::pack(&[&src], &archive, &PackOptions::default(), None).unwrap();

    let mut boom = |_: &transfer::Progress| -> bool { panic!("boom in the callback") };
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        transfer::verify(&archive, &VerifyOptions::default(), Some(&mut boom))
    }));
    let payload = caught.expect_err("the panic comes back to the caller");
    assert_eq!(
        payload.downcast_ref::<&str>(),
        Some(&"boom in the callback")
    );
}

#[test]
fn an_encrypted_archive_needs_its_key() {
    let dir = TempDir::new("encrypted");
    let src = tree(&dir);
    let key = dir.0.join("k.key");
    transfer::keygen(&key).unwrap();
    assert_eq!(
        transfer::keygen(&key).unwrap_err().status,
        Status::InvalidArgument
    );
    let archive = dir.0.join("sealed.nubo");
    let options = PackOptions {
        key_file: Some(key.clone()),
        ..Default::default()
    };
    transfer::pack(&[&src], &archive, &options, None).unwrap();
    let e = Archive::open(&archive, None)
        .err()
        .expect("refused without the key");
    assert_eq!(e.status, Status::InvalidArgument);
    assert!(e.message.contains("--key"), "{}", e.message);
    let opened = Archive::open(&archive, Some(&key)).unwrap();
    assert_eq!(opened.read("src/hello.txt").unwrap(), b"hello, archive\n");
    let verify = VerifyOptions {
        key_file: Some(key),
        ..Default::default()
    };
    transfer::verify(&archive, &verify, None).unwrap();
}

#[test]
fn bad_input_is_refused_with_the_reason() {
    let dir = TempDir::new("bad");
    let missing = transfer::pack(
        &[dir.0.join("missing")],
        dir.0.join("m.nubo"),
        &PackOptions::default(),
        None,
    );
    assert_eq!(missing.unwrap_err().status, Status::NotFound);
    let nul = transfer::pack(
        &["a\0b"],
        dir.0.join("n.nubo"),
        &PackOptions::default(),
        None,
    )
    .unwrap_err();
    assert_eq!(nul.status, Status::InvalidArgument);
    assert!(nul.message.contains("NUL"), "{}", nul.message);
    let none: [&str; 0] = [];
    assert_eq!(
        transfer::pack(&none, dir.0.join("e.nubo"), &PackOptions::default(), None)
            .unwrap_err()
            .status,
        Status::InvalidArgument
    );
    let bad_chunk = PackOptions {
        chunk_size: Some(3),
        ..Default::default()
    };
    assert_eq!(
        transfer::pack(&[&dir.0], dir.0.join("c.nubo"), &bad_chunk, None)
            .unwrap_err()
            .status,
        Status::InvalidArgument
    );
    fs::write(dir.0.join("junk.nubo"), b"not an archive at all").unwrap();
    assert_eq!(
        Archive::open(dir.0.join("junk.nubo"), None)
            .err()
            .unwrap()
            .status,
        Status::Corrupt
    );
    assert_eq!(
        transfer::verify(dir.0.join("junk.nubo"), &VerifyOptions::default(), None)
            .unwrap_err()
            .status,
        Status::Corrupt
    );
}

#[test]
fn codec_names_are_the_librarys() {
    assert_eq!(Codec::parse(" LZ4 ").unwrap(), Codec::Lz4);
    assert_eq!(Codec::parse("auto").unwrap(), Codec::Auto);
    assert_eq!(Codec::Zstd.name(), "zstd");
    assert_eq!(Codec::Zero.name(), "zero");
    let refused = Codec::parse("zero").unwrap_err();
    assert_eq!(refused.status, Status::InvalidArgument);
    assert!(
        refused
            .message
            .contains("use auto, zstd, lz4, float or none"),
        "{}",
        refused.message
    );
    assert!(Codec::parse("gzip").is_err());
}
