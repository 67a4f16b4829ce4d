//! Starts a receiving server on loopback and sends a directory to it twice, as `nubo-xfer serve`
//! and `send` do: the second send finds everything verified and skips it.
//! `cargo run --offline --example send -- DIR DEST`.

use nubo::net::{self, SendOptions, SendProgress, Server, ServerOptions};

fn main() -> Result<(), nubo::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 2 {
        eprintln!("usage: send DIR DEST   (DEST: an existing directory for the server)");
        std::process::exit(2);
    }
    // Any bytes will do as the token; real use reads it from a file or NUBO_TOKEN.
    let token = b"example-token".to_vec();
    let server = Server::start(&ServerOptions {
        token: Some(token.clone()),
        ..ServerOptions::new(&args[1])
    })?;
    let to = format!("127.0.0.1:{}/example", server.port());
    let options = SendOptions {
        token: Some(token),
        ..Default::default()
    };
    let mut show = |p: &SendProgress| {
        eprintln!(
            "sending: {} of {} bytes, {} on the wire",
            p.bytes_done, p.bytes_total, p.wire_bytes
        );
        true // false would cancel; the next send resumes
    };
    for attempt in ["first", "second"] {
        let s = net::send(&[&args[0]], &to, &options, Some(&mut show))?;
        println!(
            "{attempt} send: {} files, {} bytes sent, {} skipped, {} on the wire (TLS 1.3)",
            s.files, s.bytes_sent, s.bytes_skipped, s.wire_bytes
        );
    }
    let stats = server.stats()?;
    println!("server: {} sessions, {} files", stats.sessions, stats.files);
    Ok(())
}
