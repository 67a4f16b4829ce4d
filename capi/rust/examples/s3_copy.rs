//! Copies a directory to S3-compatible storage and back, as `nubo-xfer cp` does, with AWS
//! CLI configuration (AWS_* variables, ~/.aws profiles):
//! `cargo run --offline --example s3_copy -- DIR s3://BUCKET/PREFIX/ BACK_DIR`.

use nubo::s3::{self, CopyOptions};
use nubo::transfer::Progress;

fn main() -> Result<(), nubo::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 3 || !args[1].starts_with("s3://") || !args[1].ends_with('/') {
        eprintln!("usage: s3_copy DIR s3://BUCKET/PREFIX/ BACK_DIR");
        std::process::exit(2);
    }
    let mut show = |p: &Progress| {
        eprintln!("{} of {} bytes", p.bytes_done, p.bytes_total);
        true // false cancels; the same copy later resumes
    };
    let options = CopyOptions::default();
    let up = s3::copy(&args[0], &args[1], &options, Some(&mut show))?;
    println!(
        "up: {} files, {} bytes sent in {} parts",
        up.files, up.bytes_sent, up.parts
    );
    let down = s3::copy(&args[1], &args[2], &options, None)?;
    println!("down: {} files, {} bytes, verified", down.files, down.bytes);
    Ok(())
}
