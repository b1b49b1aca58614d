//! A real restate-server for the tests: the binary `scripts/restate.sh` installed from the npm
//! registry (`AGENTIX_RESTATE_SERVER`), started on loopback ports in a temporary directory and
//! killed when the test ends; HTTP/1.1 to its ingress and admin API; the service's process.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::TempDir;

/// A port free on 127.0.0.1 now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A restate-server of the test's own, killed when dropped.
pub struct Restate {
    child: Child,
    /// The port its ingress listens on: where services are called.
    pub ingress: u16,
    /// The port of its admin API: deployments, introspection.
    pub admin: u16,
    _dir: TempDir,
}

impl Restate {
    /// Starts restate-server and waits until its admin API answers.
    pub fn start(name: &str) -> Restate {
        let binary = std::env::var("AGENTIX_RESTATE_SERVER").expect(
            "AGENTIX_RESTATE_SERVER names the restate-server binary: run scripts/restate.sh",
        );
        let dir = TempDir::new(name);
        let (ingress, admin, node) = (free_port(), free_port(), free_port());
        // Retries come fast: a killed service is back within a second.
        let config = format!(
            r#"cluster-name = "agentix-test"
default-num-partitions = 2
disable-telemetry = true
rocksdb-total-memory-size = "256 MiB"
bind-address = "127.0.0.1:{node}"
advertised-address = "http://127.0.0.1:{node}/"
log-filter = "warn"

[default-retry-policy]
initial-interval = "50ms"
exponentiation-factor = 1.5
max-interval = "500ms"
max-attempts = 1000
on-max-attempts = "kill"

[admin]
bind-address = "127.0.0.1:{admin}"
disable-web-ui = true

[admin.query-engine]
memory-size = "64 MiB"

[ingress]
bind-address = "127.0.0.1:{ingress}"
"#
        );
        std::fs::write(dir.0.join("restate.toml"), config).unwrap();
        let log = std::fs::File::create(dir.0.join("server.log")).unwrap();
        let child = Command::new(binary)
            .arg("--config-file")
            .arg(dir.0.join("restate.toml"))
            .arg("--base-dir")
            .arg(dir.0.join("data"))
            .args(["--listen-mode", "tcp", "--no-logo"])
            .env("DO_NOT_TRACK", "1")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("restate-server starts");
        let restate = Restate { child, ingress, admin, _dir: dir };
        wait_for(Duration::from_secs(30), "restate-server's admin API", || {
            request(admin, "GET", "/health", "").is_some_and(|(status, _)| status == 200)
        });
        wait_for(Duration::from_secs(30), "restate-server's ingress", || {
            request(ingress, "GET", "/restate/health", "").is_some_and(|(status, _)| status == 200)
        });
        restate
    }

    /// Registers the service listening on `port` (again, forced, after a change).
    pub fn register(&self, port: u16) {
        register(self.admin, port);
    }

    /// Calls `handler` of the conversation `key` with `body` (JSON) through the ingress:
    /// the status and the body.
    pub fn call(&self, key: &str, handler: &str, body: &str) -> (u16, String) {
        request(self.ingress, "POST", &format!("/Conversation/{key}/{handler}"), body)
            .expect("the ingress answers")
    }

    /// Sends `message` to the conversation `key` from a thread of its own: the call returns
    /// once the turn ends, whatever died meanwhile.
    pub fn send_in_background(
        &self,
        key: &str,
        message: &str,
    ) -> std::thread::JoinHandle<(u16, String)> {
        let (ingress, path) = (self.ingress, format!("/Conversation/{key}/send"));
        let body = serde_json::to_string(message).expect("a string is JSON");
        std::thread::spawn(move || {
            request(ingress, "POST", &path, &body).expect("the ingress answers")
        })
    }

    /// The log of the conversation `key`, as its `history` handler reads it.
    pub fn history(&self, key: &str) -> Vec<agentix::Entry> {
        let (status, body) = self.call(key, "history", "");
        assert_eq!(status, 200, "{body}");
        serde_json::from_str(&body).expect("a log")
    }
}

impl Drop for Restate {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Registers the service listening on `port` with the restate-server whose admin API is on
/// `admin`: the newest deployment takes the service's new invocations.
pub fn register(admin: u16, port: u16) {
    let body = format!(r#"{{"uri": "http://127.0.0.1:{port}", "force": true}}"#);
    wait_for(Duration::from_secs(30), "the deployment's registration", || {
        request(admin, "POST", "/deployments", &body)
            .is_some_and(|(status, _)| (200..300).contains(&status))
    });
}

/// The rows restate-server's SQL introspection (`sys_invocation`, …) answers to `sql`.
pub fn query(admin: u16, sql: &str) -> Vec<serde_json::Value> {
    let body = serde_json::json!({ "query": sql }).to_string();
    let (status, body) = request(admin, "POST", "/query", &body).expect("the admin API answers");
    assert_eq!(status, 200, "{sql}: {body}");
    let answer: serde_json::Value = serde_json::from_str(&body).expect("JSON rows");
    answer["rows"].as_array().cloned().unwrap_or_default()
}

/// Waits until `ready`, at most `limit`.
pub fn wait_for(limit: Duration, what: &str, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < limit, "{what}: not ready after {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One HTTP/1.1 request to 127.0.0.1:`port`: the status and the body, or `None` if nothing
/// answered.
pub fn request(port: u16, method: &str, path: &str, body: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    // A turn that never ends fails the test instead of hanging it.
    stream.set_read_timeout(Some(Duration::from_secs(120))).ok()?;
    let kind = if body.is_empty() { "" } else { "Content-Type: application/json\r\n" };
    // JSON, not the Arrow stream the admin API's `/query` answers by default.
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{kind}Accept: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).ok()?;
    stream.write_all(body.as_bytes()).ok()?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).ok()?;
    let split = response.windows(4).position(|window| window == b"\r\n\r\n")?;
    let (head, body) = (String::from_utf8_lossy(&response[..split]), &response[split + 4..]);
    let status = head.split(' ').nth(1)?.parse().ok()?;
    let chunked = head.to_ascii_lowercase().contains("transfer-encoding: chunked");
    let body = if chunked { unchunk(body)? } else { body.to_vec() };
    Some((status, String::from_utf8_lossy(&body).into_owned()))
}

/// A chunked body's bytes, joined.
fn unchunk(mut body: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line = body.windows(2).position(|window| window == b"\r\n")?;
        let size =
            usize::from_str_radix(std::str::from_utf8(&body[..line]).ok()?.trim(), 16).ok()?;
        if size == 0 {
            return Some(out);
        }
        let rest = &body[line + 2..];
        out.extend_from_slice(rest.get(..size)?);
        body = rest.get(size + 2..)?;
    }
}

/// The service: this test binary run again, running only its `service` test. Killed when
/// dropped, if it still serves.
pub struct Service(Child);

impl Service {
    /// Runs the service with `spec` in the variable `var`.
    pub fn spawn(var: &str, spec: String) -> Service {
        let child = Command::new(std::env::current_exe().unwrap())
            .args(["service", "--exact", "--ignored", "--test-threads=1", "--nocapture"])
            .env(var, spec)
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        Service(child)
    }

    /// Waits for the service to end by itself, a minute at most: how it ended.
    pub fn wait(mut self) -> std::process::ExitStatus {
        let mut status = None;
        wait_for(Duration::from_secs(60), "the service's end", || {
            status = self.0.try_wait().unwrap();
            status.is_some()
        });
        status.unwrap()
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
