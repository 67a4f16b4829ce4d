//! nubo::interruption against libnubo_c.so: a loopback metadata service that answers as GCP
//! documents it (Metadata-Flavor: Google, instance/preempted) and turns to TRUE after a few
//! polls; the watcher finds the cloud and calls back once. With no service, the watcher is off.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::Duration;

use nubo::interruption::Watcher;
use nubo::Status;

/// Serves GCP's preempted flag on 127.0.0.1: FALSE for the first `quiet` polls, then TRUE.
fn gcp_metadata(quiet: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut polls = 0;
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request = String::new();
            let mut google = false;
            let mut line = String::new();
            if reader.read_line(&mut request).is_err() {
                continue;
            }
            while reader.read_line(&mut line).map(|n| n > 2).unwrap_or(false) {
                google |= line
                    .to_ascii_lowercase()
                    .starts_with("metadata-flavor: google");
                line.clear();
            }
            let preempted = request.starts_with("GET /computeMetadata/v1/instance/preempted");
            let (status, body) = if preempted && google {
                polls += 1;
                ("200 OK", if polls > quiet { "TRUE" } else { "FALSE" })
            } else {
                ("404 Not Found", "")
            };
            let mut stream = stream;
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("http://{address}")
}

#[test]
fn a_gcp_preemption_is_noticed_once_and_nothing_answering_means_off() {
    // The only test here that reads the variable, which is the process's.
    std::env::set_var("NUBO_METADATA_URL", gcp_metadata(2));
    let (tx, rx) = mpsc::channel();
    let watcher = Watcher::start(0.1, move |notice| tx.send(notice.clone()).unwrap()).unwrap();
    assert_eq!(watcher.cloud().unwrap(), "gcp");
    let notice = rx.recv_timeout(Duration::from_secs(20)).expect("no notice");
    assert_eq!(notice.cloud, "gcp");
    assert!(!notice.action.is_empty(), "{notice:?}");
    assert!(
        rx.recv_timeout(Duration::from_millis(500)).is_err(),
        "noticed twice"
    );
    drop(watcher);

    // Nothing listens there: the watcher is off, and says so.
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    std::env::set_var("NUBO_METADATA_URL", format!("http://{closed}"));
    let off = Watcher::start(0.1, |_| panic!("a notice from nowhere")).unwrap();
    assert_eq!(off.cloud().unwrap(), "");
    drop(off);

    let bad = Watcher::start(0.0, |_| {}).err().unwrap();
    assert_eq!(bad.status, Status::InvalidArgument);
    std::env::remove_var("NUBO_METADATA_URL");
}

#[test]
fn watcher_is_send_and_sync() {
    fn both<T: Send + Sync>() {}
    both::<Watcher>();
}
