//! Packs a directory into an archive and lists it, as `nubo-xfer pack` and `list` do, with a
//! progress line: `cargo run --offline --example archive -- DIR OUT.nubo`.

use nubo::transfer::{self, Archive, PackOptions};

fn main() -> Result<(), nubo::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 2 {
        eprintln!("usage: archive DIR OUT.nubo");
        std::process::exit(2);
    }
    let mut last = 0;
    let mut show = |p: &transfer::Progress| {
        if p.bytes_done != last {
            last = p.bytes_done;
            eprintln!("packing: {} of {} bytes", p.bytes_done, p.bytes_total);
        }
        true // false would cancel, leaving the pack resumable
    };
    let summary = transfer::pack(
        &[&args[0]],
        &args[1],
        &PackOptions::default(),
        Some(&mut show),
    )?;
    println!(
        "{} files, {} bytes stored in {} ({} chunks)",
        summary.files, summary.bytes, summary.bytes_stored, summary.chunks
    );
    let archive = Archive::open(&args[1], None)?;
    for entry in archive.entries()? {
        println!("{:>10}  {}", entry.size, entry.path);
    }
    Ok(())
}
