//! PostgreSQL servers a test starts itself: a primary with a synchronous streaming
//! standby (`initdb`, `pg_basebackup -R`, two ports on 127.0.0.1), made from the binaries of
//! `pg_config --bindir` and run as the `postgres` user when the tests run as root. Each lives
//! in its own temporary directory and is stopped (`-m immediate`) when dropped.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The server binaries' directory.
fn bindir() -> PathBuf {
    let out = Command::new("pg_config")
        .arg("--bindir")
        .output()
        .expect("pg_config is on PATH (PostgreSQL's server package)");
    assert!(out.status.success(), "{out:?}");
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// Runs a server binary, as `postgres` when we are root (PostgreSQL refuses to run as root).
fn run(program: &str, args: &[&str]) -> Output {
    let path = bindir().join(program);
    let out = if is_root() {
        Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(&path)
            .args(args)
            .output()
    } else {
        Command::new(&path).args(args).output()
    }
    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    out
}

fn check(what: &str, out: Output) {
    assert!(
        out.status.success(),
        "{what}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A free TCP port on 127.0.0.1 (bound and released: a race with another process is possible
/// but unlikely).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One server: its data directory and port.
pub struct Server {
    pub data: PathBuf,
    pub port: u16,
    log: PathBuf,
    running: bool,
}

impl Server {
    fn pg_ctl(&self, args: &[&str]) -> Output {
        let data = self.data.to_string_lossy().into_owned();
        let log = self.log.to_string_lossy().into_owned();
        let mut all = vec!["-D", &data, "-l", &log];
        all.extend_from_slice(args);
        run("pg_ctl", &all)
    }

    /// Starts the server; on a port another process took since [`free_port`] released it (a
    /// client's outgoing connection may be given it: it is in the ephemeral range), again on a
    /// new one, a few times.
    pub fn start(&mut self) {
        for _ in 0..5 {
            let out = self.pg_ctl(&["-w", "-t", "60", "start"]);
            if out.status.success() {
                self.running = true;
                return;
            }
            let log = self.log();
            if !log.contains("could not bind") {
                check(&format!("pg_ctl start (server log:\n{log})"), out);
            }
            self.port = free_port();
            append(
                &self.data.join("postgresql.conf"),
                &format!("\nport = {}\n", self.port),
            );
        }
        panic!("pg_ctl start: no free port in five tries:\n{}", self.log());
    }

    /// `pg_ctl stop -m immediate`: the server's processes are killed, as in a crash.
    pub fn kill(&mut self) {
        check("pg_ctl stop", self.pg_ctl(&["-m", "immediate", "stop"]));
        self.running = false;
    }

    pub fn promote(&self) {
        check("pg_ctl promote", self.pg_ctl(&["-w", "promote"]));
    }

    /// The server's log, for a failure's message.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// A URL to database `db` on this server alone.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{db}", self.port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.running {
            let _ = self.pg_ctl(&["-m", "immediate", "stop"]);
        }
    }
}

/// A primary and its synchronous standby, in one temporary directory.
pub struct Pair {
    pub primary: Server,
    pub standby: Server,
    _dir: tempfile::TempDir,
}

/// A directory the `postgres` user owns.
fn owned_dir(parent: &Path, name: &str) -> PathBuf {
    let dir = parent.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    if is_root() {
        let out = Command::new("chown")
            .args(["-R", "postgres:postgres"])
            .arg(&dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }
    dir
}

impl Pair {
    /// Starts a primary (`synchronous_standby_names = '*'`: a commit returns once the standby
    /// has it) and a standby streaming from it, and waits until the standby is synchronous.
    pub async fn start() -> Pair {
        let dir = tempfile::Builder::new()
            .prefix("nudge-pg-pair")
            .tempdir_in("/tmp")
            .unwrap();
        if is_root() {
            let out = Command::new("chown")
                .args(["postgres:postgres"])
                .arg(dir.path())
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
        }
        let sockets = owned_dir(dir.path(), "sockets");
        let data1 = dir.path().join("primary");
        let (p1, p2) = (free_port(), free_port());
        check(
            "initdb",
            run(
                "initdb",
                &[
                    "-D",
                    &data1.to_string_lossy(),
                    "-U",
                    "postgres",
                    "--auth=trust",
                    "--no-sync",
                    "--no-instructions",
                ],
            ),
        );
        let conf = format!(
            "\nlisten_addresses = '127.0.0.1'\nport = {p1}\nunix_socket_directories = '{}'\n\
             wal_level = replica\nmax_wal_senders = 5\nhot_standby = on\n\
             synchronous_standby_names = '*'\nsynchronous_commit = on\nfsync = off\n\
             full_page_writes = on\nmax_connections = 100\nshared_buffers = 32MB\n",
            sockets.display()
        );
        append(&data1.join("postgresql.conf"), &conf);
        let mut primary = Server {
            data: data1,
            port: p1,
            log: dir.path().join("primary.log"),
            running: false,
        };
        // The log beside the data directory must be writable by `postgres`.
        owned_file(&primary.log);
        primary.start();
        let data2 = dir.path().join("standby");
        check(
            "pg_basebackup",
            run(
                "pg_basebackup",
                &[
                    "-h",
                    "127.0.0.1",
                    "-p",
                    &primary.port.to_string(),
                    "-U",
                    "postgres",
                    "-D",
                    &data2.to_string_lossy(),
                    "-R",
                    "-X",
                    "stream",
                ],
            ),
        );
        // Promoted, it has no standby of its own: it must not wait for one on every commit
        // (what the primary's `synchronous_standby_names`, copied over, would make it do).
        append(
            &data2.join("postgresql.conf"),
            &format!("\nport = {p2}\nsynchronous_standby_names = ''\n"),
        );
        let mut standby = Server {
            data: data2,
            port: p2,
            log: dir.path().join("standby.log"),
            running: false,
        };
        owned_file(&standby.log);
        standby.start();
        let pair = Pair {
            primary,
            standby,
            _dir: dir,
        };
        pair.wait_synchronous().await;
        pair
    }

    /// Until the primary reports its standby `sync`.
    async fn wait_synchronous(&self) {
        let client = connect(&self.primary.url("postgres")).await;
        for _ in 0..300 {
            let rows = client
                .query("SELECT sync_state FROM pg_stat_replication", &[])
                .await
                .unwrap();
            if rows.iter().any(|r| r.get::<_, String>(0) == "sync") {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        panic!(
            "the standby never became synchronous:\n{}\n{}",
            self.primary.log(),
            self.standby.log()
        );
    }

    /// libpq's multi-host URL of both, asking for the one that takes writes.
    pub fn url(&self, db: &str) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/{db}?target_session_attrs=read-write",
            self.primary.port, self.standby.port
        )
    }
}

fn append(path: &Path, text: &str) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

fn owned_file(path: &Path) {
    std::fs::write(path, "").unwrap();
    if is_root() {
        let out = Command::new("chown")
            .arg("postgres:postgres")
            .arg(path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }
}

/// A plain client (the test's own view of the database).
pub async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| panic!("{url}: {e}"));
    tokio::spawn(async move {
        let _ = connection.await;
    });
    client
}
