//! The embedded default on a full disk: SQLite capped with `PRAGMA max_page_count`
//! (what a full file system does to it, without needing one). Writes then answer UNAVAILABLE
//! saying the database is out of space, reads go on, nothing stored before is lost, and the
//! file opens again without repair (`PRAGMA integrity_check`) and takes writes once there is
//! room. (`kill -9` mid-write is `crash`'s.)

use chrono::Utc;
use nudge::app::App;
use nudge::clock::ManualClock;
use nudge::config::{ClockKind, Config, DatabaseUrl};
use nudge::proto::v1::contact_service_client::ContactServiceClient;
use nudge::proto::v1::*;
use std::sync::Arc;
use tonic::transport::Channel;

struct Running {
    channel: Channel,
    token: String,
    stop: tokio::sync::oneshot::Sender<()>,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
}

async fn start(path: &str, max_pages: Option<u32>) -> Running {
    let mut config = Config::new(
        "127.0.0.1:0".parse().unwrap(),
        DatabaseUrl::Sqlite(path.into()),
        ClockKind::Manual,
    );
    config.announce_first_token = false;
    config.database.sqlite_max_pages = max_pages;
    let clock = Arc::new(ManualClock::new(crate::common::start_instant()));
    let app = App::build_with_clock(config, clock)
        .await
        .expect("the store opens");
    let addr = app.local_addr().unwrap();
    let token = nudge::auth::create_token(
        &app.state().core.db,
        "default",
        &nudge::auth::Scope::Full,
        Utc::now().timestamp_millis(),
    )
    .await;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(app.run(async {
        let _ = stopped.await;
    }));
    let channel = Channel::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    Running {
        channel,
        // On a full store a token cannot be written: the tests make theirs before the cap.
        token: token.unwrap_or_default(),
        stop,
        server,
    }
}

impl Running {
    async fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.server.await;
    }

    fn req<T>(&self, token: &str, message: T) -> tonic::Request<T> {
        let mut r = tonic::Request::new(message);
        r.metadata_mut()
            .insert("authorization", format!("Bearer {token}").parse().unwrap());
        let _ = &self.token;
        r
    }

    async fn upsert(&self, token: &str, id: &str) -> Result<(), tonic::Status> {
        ContactServiceClient::new(self.channel.clone())
            .upsert_contact(
                self.req(
                    token,
                    UpsertContactRequest {
                        contact: Some(Contact {
                            id: id.into(),
                            email: format!("{id}@example.com"),
                            // A large attribute: the store fills in a few hundred writes.
                            attributes: Some(prost_types::Struct {
                                fields: [(
                                    "notes".to_string(),
                                    prost_types::Value {
                                        kind: Some(prost_types::value::Kind::StringValue(
                                            "x".repeat(3000),
                                        )),
                                    },
                                )]
                                .into(),
                            }),
                            ..Default::default()
                        }),
                    },
                ),
            )
            .await
            .map(|_| ())
    }

    async fn get(&self, token: &str, id: &str) -> Result<Contact, tonic::Status> {
        ContactServiceClient::new(self.channel.clone())
            .get_contact(self.req(token, GetContactRequest { id: id.into() }))
            .await
            .map(|r| r.into_inner().contact.unwrap())
    }
}

/// Pages in use, by SQLite itself.
fn pages(path: &str) -> u32 {
    use diesel::prelude::*;
    #[derive(QueryableByName)]
    struct Count {
        #[diesel(sql_type = diesel::sql_types::Integer)]
        page_count: i32,
    }
    let mut c = diesel::SqliteConnection::establish(path).unwrap();
    diesel::sql_query("PRAGMA busy_timeout = 5000")
        .execute(&mut c)
        .unwrap();
    diesel::sql_query("SELECT page_count FROM pragma_page_count()")
        .get_result::<Count>(&mut c)
        .unwrap()
        .page_count as u32
}

fn integrity(path: &str) -> String {
    use diesel::prelude::*;
    #[derive(QueryableByName)]
    struct Check {
        #[diesel(sql_type = diesel::sql_types::Text)]
        integrity_check: String,
    }
    let mut c = diesel::SqliteConnection::establish(path).unwrap();
    diesel::sql_query("PRAGMA busy_timeout = 5000")
        .execute(&mut c)
        .unwrap();
    diesel::sql_query("PRAGMA integrity_check")
        .get_result::<Check>(&mut c)
        .unwrap()
        .integrity_check
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_refuses_writes_clearly_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nudge.db").to_string_lossy().into_owned();
    // Migrated and a token made, then capped a little above what it holds.
    let first = start(&path, None).await;
    let token = first.token.clone();
    first.stop().await;
    let cap = pages(&path) + 40;
    let full = start(&path, Some(cap)).await;
    let mut stored = Vec::new();
    let refusal = loop {
        let id = format!("c{}", stored.len());
        match full.upsert(&token, &id).await {
            Ok(()) => stored.push(id),
            Err(e) => break e,
        }
        assert!(stored.len() < 10_000, "the cap of {cap} pages never filled");
    };
    assert!(!stored.is_empty(), "nothing fit under the cap");
    assert_eq!(refusal.code(), tonic::Code::Unavailable, "{refusal:?}");
    assert!(
        refusal.message().contains("the database refuses writes")
            && refusal.message().contains("out of space"),
        "{}",
        refusal.message()
    );
    // Refused again, the same way; reads go on.
    let again = full.upsert(&token, "one-more").await.unwrap_err();
    assert_eq!(again.code(), tonic::Code::Unavailable);
    for id in &stored {
        assert_eq!(full.get(&token, id).await.unwrap().id, *id);
    }
    assert_eq!(
        full.get(&token, "one-more").await.unwrap_err().code(),
        tonic::Code::NotFound
    );
    full.stop().await;
    // Opens again as it is, no repair; with room, it takes writes.
    assert_eq!(integrity(&path), "ok");
    let roomy = start(&path, None).await;
    for id in &stored {
        assert_eq!(roomy.get(&token, id).await.unwrap().id, *id);
    }
    roomy.upsert(&token, "one-more").await.unwrap();
    roomy.stop().await;
    assert_eq!(integrity(&path), "ok");
}
