//! Copies a directory to a store and back, as `nubo-xfer cp` does:
//! `cargo run --offline --example copy -- DIR URL/PREFIX/ BACK_DIR`, where the URL is
//! s3://BUCKET (AWS_* variables, ~/.aws profiles), gs://BUCKET (GS_ACCESS_KEY_ID and
//! GS_SECRET_ACCESS_KEY) or file:///PATH (a shared file system).

use nubo::stores::CopyOptions;
use nubo::transfer::Progress;

fn main() -> Result<(), nubo::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 3 || !nubo::is_store_url(&args[1]) || !args[1].ends_with('/') {
        eprintln!("usage: copy DIR s3://BUCKET/PREFIX/ (or gs://..., file:///...) BACK_DIR");
        std::process::exit(2);
    }
    let mut show = |p: &Progress| {
        eprintln!("{} of {} bytes", p.bytes_done, p.bytes_total);
        true // false cancels; the same copy later resumes
    };
    let options = CopyOptions::default();
    let up = nubo::copy(&args[0], &args[1], &options, Some(&mut show))?;
    println!(
        "up: {} files, {} bytes sent in {} parts",
        up.files, up.bytes_sent, up.parts
    );
    let down = nubo::copy(&args[1], &args[2], &options, None)?;
    println!("down: {} files, {} bytes, verified", down.files, down.bytes);
    Ok(())
}
