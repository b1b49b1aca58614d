//! Real databases for the store's tests: a SQLite file in a fresh temporary directory, and,
//! with the `postgres-tests` feature, a fresh database on a PostgreSQL server on 127.0.0.1 —
//! the one `scripts/test` started (`AGENTIX_POSTGRES_URL`), or else one this test process
//! starts from the machine's `initdb`/`pg_ctl`, in a temporary directory, stopped when the
//! process ends.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use agentix_store::Store;

pub mod durable_turn;
pub mod restate;

/// A directory of its own for one test, removed when it is dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// A new, empty directory under the system's temporary one, named after `name`, this
    /// process and a count.
    pub fn new(name: &str) -> Self {
        static COUNT: AtomicU32 = AtomicU32::new(0);
        let n = COUNT.fetch_add(1, Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("agentix-store-{}-{name}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A SQLite store in a file of its own.
pub async fn sqlite(name: &str) -> (Store, String, TempDir) {
    let dir = TempDir::new(name);
    let url = format!("sqlite://{}", dir.0.join("store.db").display());
    (Store::open(&url).await.unwrap(), url, dir)
}

/// A PostgreSQL store in a database of its own, created for the test.
pub async fn postgres(name: &str) -> (Store, String) {
    let url = postgres_database(name);
    (Store::open(&url).await.unwrap(), url)
}

/// A new, empty PostgreSQL database for the test: its URL.
pub fn postgres_database(name: &str) -> String {
    static COUNT: AtomicU32 = AtomicU32::new(0);
    let server = server();
    let database = format!(
        "t_{}_{}_{}",
        std::process::id(),
        COUNT.fetch_add(1, Ordering::Relaxed),
        // PostgreSQL keeps 63 bytes of a name.
        name.chars()
            .take(32)
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect::<String>()
    );
    let status = Command::new("psql")
        .args(["-q", "-d", &format!("{server}/postgres"), "-c"])
        .arg(format!("CREATE DATABASE {database}"))
        .status()
        .expect("psql runs");
    assert!(status.success(), "CREATE DATABASE {database}");
    format!("{server}/{database}")
}

/// The server's URL without a database: `postgres://agentix@127.0.0.1:PORT`.
fn server() -> &'static str {
    static SERVER: OnceLock<String> = OnceLock::new();
    SERVER.get_or_init(|| match std::env::var("AGENTIX_POSTGRES_URL") {
        Ok(url) => url.trim_end_matches('/').trim_end_matches("/postgres").to_owned(),
        Err(_) => start_server(),
    })
}

/// Starts a PostgreSQL server for this process: `initdb` in a temporary directory (as the
/// `postgres` user when running as root: PostgreSQL refuses root), on a free loopback port,
/// with a watchdog that stops it when this process ends.
// The watchdog outlives this process by design: it is never waited for.
#[expect(clippy::zombie_processes)]
fn start_server() -> String {
    let port = free_port();
    let dir = std::env::temp_dir().join(format!("agentix-pg-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let as_root =
        Command::new("id").arg("-u").output().map(|out| out.stdout == b"0\n").unwrap_or(false);
    let run = |script: String| {
        let mut command = if as_root {
            let _ = Command::new("chown").arg("-R").arg("postgres").arg(&dir).status();
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--", "sh", "-c"]);
            command
        } else {
            let mut command = Command::new("sh");
            command.arg("-c");
            command
        };
        command
            .arg(script)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("a shell runs")
    };
    let data = dir.join("data");
    let initdb = run(format!("initdb -D '{}' -A trust -U agentix", data.display()));
    assert!(initdb.success(), "initdb (is PostgreSQL installed? set AGENTIX_POSTGRES_URL)");
    let started = run(format!(
        "pg_ctl -D '{data}' -o \"-p {port} -h 127.0.0.1 -k '{dir}'\" -l '{dir}/log' -w start",
        data = data.display(),
        dir = dir.display(),
    ));
    assert!(started.success(), "pg_ctl start");
    // The watchdog, as this process's own user (who may signal it): once this process is
    // gone, stop the server and remove its directory.
    let as_postgres = if as_root { "runuser -u postgres -- " } else { "" };
    let watchdog = format!(
        "while kill -0 {pid} 2>/dev/null; do sleep 1; done; \
         {as_postgres}pg_ctl -D '{data}' -m immediate stop; rm -rf '{dir}'",
        pid = std::process::id(),
        data = data.display(),
        dir = dir.display(),
    );
    Command::new("sh")
        .args(["-c", &watchdog])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the watchdog starts");
    format!("postgres://agentix@127.0.0.1:{port}")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// One test over each backend: `name::sqlite` runs `body(store, url)` on SQLite, and, with the
/// `postgres-tests` feature (`scripts/test` turns it on and starts the server),
/// `name::postgres` on PostgreSQL.
#[macro_export]
macro_rules! on_both_backends {
    ($($name:ident => $body:ident;)*) => {$(
        mod $name {
            #[tokio::test]
            async fn sqlite() {
                let (store, url, _dir) = $crate::sqlite(stringify!($name)).await;
                super::$body(store, url).await;
            }

            #[cfg(feature = "postgres-tests")]
            #[tokio::test]
            async fn postgres() {
                let (store, url) = $crate::postgres(stringify!($name)).await;
                super::$body(store, url).await;
            }
        }
    )*};
}

/// Takes the store at `url` back to schema version 3: no owners, nobody recorded as answering
/// an approval — a store written before conversations had owners.
pub async fn undo_schema_version_4(url: &str) {
    use sqlx::Executor;
    sqlx::any::install_default_drivers();
    let pool = sqlx::any::AnyPoolOptions::new().max_connections(1).connect(url).await.unwrap();
    for statement in [
        "DROP INDEX conversations_by_owner",
        "ALTER TABLE conversations DROP COLUMN owner",
        "ALTER TABLE approvals DROP COLUMN answered_by",
        "DELETE FROM agentix_schema WHERE version = 4",
    ] {
        pool.execute(statement).await.unwrap();
    }
    pool.close().await;
}

/// Kills this process the way a power cut or the OOM killer would: no unwinding, no flush.
pub fn die() -> ! {
    let pid = std::process::id().to_string();
    let _ = Command::new("kill").args(["-9", &pid]).status();
    loop {
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

/// Appends a line to a file and syncs it: a side effect that survives the process.
pub fn append(path: &Path, line: &str) {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path).unwrap();
    writeln!(file, "{line}").unwrap();
    file.sync_all().unwrap();
}

/// The lines of a file; none if it does not exist.
pub fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path).unwrap_or_default().lines().map(str::to_owned).collect()
}

/// This test binary run again as a child, running only its `child` test, with `spec` in the
/// variable `var`; its status.
pub fn run_child(var: &str, spec: String) -> std::process::ExitStatus {
    Command::new(std::env::current_exe().unwrap())
        .args(["child", "--exact", "--ignored", "--test-threads=1"])
        .env(var, spec)
        .stdout(Stdio::null())
        .status()
        .unwrap()
}

/// A tool the model calls: the time, always noon.
pub struct Clock;

impl agentix::Tool for Clock {
    const NAME: &'static str = "clock";
    type Args = serde_json::Value;
    type Output = String;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        "The time."
    }

    async fn call(&self, _: serde_json::Value, _: &agentix::Turn) -> Result<String, Self::Error> {
        Ok("noon".to_owned())
    }
}
