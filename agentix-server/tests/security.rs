//! Nobody gets in who should not: the `agentix-server` binary run as a process on 127.0.0.1
//! and attacked as an attacker would, over real HTTP — each route without credentials, with
//! another subject's key, without the approver role, with bad JWTs, with a forged `Host` and a
//! foreign `Origin`, a flood from one key, a connection that stalls its headers — while the
//! owners' own turns and approvals go on as before, over SQLite and PostgreSQL. What the
//! process prints is read too: it names subjects, never a credential.

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use agentix_server::identity::ApiKeys;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use reqwest::{Method, RequestBuilder};
use serde_json::{Value, json};

/// The keys the tests' callers hold, by subject: what each may do is the server's flags'.
const ALICE: &str = "agx_alice_0123456789abcdef0123456789abcdef";
const BOB: &str = "agx_bob_0123456789abcdef0123456789abcdef00";
const CAROL: &str = "agx_carol_0123456789abcdef0123456789abcdef";
const DESK: &str = "agx_desk_0123456789abcdef0123456789abcdef0";
const OPS: &str = "agx_ops_0123456789abcdef0123456789abcdef000";
const SECRET: &str = "the-tests-jwt-secret-0123456789abcdef";
const AUDIENCE: &str = "agentix-tests";
const ISSUER: &str = "https://auth.test";

/// A directory of its own, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!(
            "agentix-security-{name}-{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The key file: only the keys' hashes, each with its subject and roles.
fn key_file(dir: &Path) -> PathBuf {
    let lines = [
        format!("{} alice approver", ApiKeys::hash(ALICE)),
        format!("{} bob", ApiKeys::hash(BOB)),
        format!("{} carol approver", ApiKeys::hash(CAROL)),
        format!("{} desk support", ApiKeys::hash(DESK)),
        format!("{} ops operator,approver", ApiKeys::hash(OPS)),
    ];
    let path = dir.join("keys");
    std::fs::write(&path, format!("# the tests' callers\n{}\n", lines.join("\n"))).unwrap();
    path
}

/// The binary, running; killed when dropped. Everything it prints is kept.
struct Running {
    child: Child,
    base: String,
    port: u16,
    printed: Arc<Mutex<String>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Running {
    fn printed(&self) -> String {
        self.printed.lock().unwrap().clone()
    }
}

/// Starts the binary with `args` (and `--addr 127.0.0.1:0`) and the JWT secret in its
/// environment; returns once it serves.
fn start(args: &[&str]) -> Running {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentix-server"))
        .args(["--addr", "127.0.0.1:0"])
        .args(args)
        .env_remove("AGENTIX_MODEL")
        .env_remove("AGENTIX_API_KEYS")
        .env("AGENTIX_TEST_JWT_SECRET", SECRET)
        .env("RUST_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let printed = Arc::new(Mutex::new(String::new()));
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn({
        let printed = Arc::clone(&printed);
        move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                printed.lock().unwrap().push_str(&format!("{line}\n"));
            }
        }
    });
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let base = loop {
        let Some(Ok(line)) = lines.next() else {
            let _ = child.wait();
            panic!("the server stopped before it served:\n{}", printed.lock().unwrap());
        };
        printed.lock().unwrap().push_str(&format!("{line}\n"));
        if let Some(rest) = line.strip_prefix("Serving an agent on ") {
            break rest.split(". Try").next().unwrap().to_owned();
        }
    };
    std::thread::spawn({
        let printed = Arc::clone(&printed);
        move || {
            for line in lines.map_while(Result::ok) {
                printed.lock().unwrap().push_str(&format!("{line}\n"));
            }
        }
    });
    let port = base.rsplit(':').next().unwrap().parse().unwrap();
    Running { child, base, port, printed }
}

/// A request's status, `WWW-Authenticate` and JSON body.
async fn call(request: RequestBuilder) -> (u16, String, Value) {
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|value| value.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let text = response.text().await.unwrap();
    (status, challenge, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

fn code(body: &Value) -> &str {
    body["error"]["code"].as_str().unwrap_or_default()
}

/// What a caller holding `key` asks of the server at `base`.
struct Caller<'a> {
    client: reqwest::Client,
    base: &'a str,
    key: Option<String>,
}

impl<'a> Caller<'a> {
    fn new(base: &'a str, key: Option<&str>) -> Self {
        Caller { client: support::client(), base, key: key.map(str::to_owned) }
    }

    fn request(&self, method: Method, path: &str) -> RequestBuilder {
        let request = self.client.request(method, format!("{}{path}", self.base));
        match &self.key {
            Some(key) => request.bearer_auth(key),
            None => request,
        }
    }

    async fn create(&self) -> String {
        let (status, _, body) = call(self.request(Method::POST, "/conversations")).await;
        assert_eq!(status, 201, "{body}");
        body["id"].as_str().unwrap().to_owned()
    }

    async fn read(&self, id: &str) -> (u16, Value) {
        let (status, _, body) =
            call(self.request(Method::GET, &format!("/conversations/{id}"))).await;
        (status, body)
    }

    async fn send(&self, id: &str, message: &str) -> (u16, Value) {
        let request = self.request(Method::POST, &format!("/conversations/{id}/messages"));
        let (status, _, body) = call(request.json(&json!({ "message": message }))).await;
        (status, body)
    }

    /// The same, asking for the turn as Server-Sent Events.
    async fn stream(&self, id: &str, message: &str) -> (u16, String) {
        let request = self
            .request(Method::POST, &format!("/conversations/{id}/messages"))
            .header("accept", "text/event-stream")
            .json(&json!({ "message": message }));
        let response = request.send().await.unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    }

    async fn waiting(&self, id: &str) -> (u16, Value) {
        let path = format!("/conversations/{id}/approvals");
        let (status, _, body) = call(self.request(Method::GET, &path)).await;
        (status, body)
    }

    async fn decide(&self, id: &str, call_id: &str, decision: Value) -> (u16, Value) {
        let path = format!("/conversations/{id}/approvals/{call_id}");
        let (status, _, body) = call(self.request(Method::POST, &path).json(&decision)).await;
        (status, body)
    }
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

/// A JWT with `claims`, signed with `algorithm` by `key`.
fn token(algorithm: Algorithm, key: &EncodingKey, kid: Option<&str>, claims: Value) -> String {
    let mut header = Header::new(algorithm);
    header.kid = kid.map(str::to_owned);
    jsonwebtoken::encode(&header, &claims, key).unwrap()
}

/// Claims the server takes: alice's, for an hour.
fn good_claims() -> Value {
    json!({ "sub": "alice", "aud": AUDIENCE, "iss": ISSUER, "exp": now() + 3600,
            "roles": ["approver"] })
}

fn hs256(claims: Value) -> String {
    token(Algorithm::HS256, &EncodingKey::from_secret(SECRET.as_bytes()), None, claims)
}

/// The same claims as base64url JSON, and a header saying `alg: none`: no signature at all.
fn unsigned(claims: &Value) -> String {
    use base64::Engine;
    let encode = |value: &Value| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value.to_string().as_bytes())
    };
    format!("{}.{}.", encode(&json!({ "alg": "none", "typ": "JWT" })), encode(claims))
}

/// The server's flags of the main scenario: keys, JWTs, roles that widen, a store if given.
fn scenario_args(keys: &Path, database: Option<&str>) -> Vec<String> {
    let mut args: Vec<String> = [
        "--keys",
        keys.to_str().unwrap(),
        "--jwt-secret-env",
        "AGENTIX_TEST_JWT_SECRET",
        "--jwt-audience",
        AUDIENCE,
        "--jwt-issuer",
        ISSUER,
        "--read-all-role",
        "support",
        "--answer-all-role",
        "operator",
        "--rate",
        "200",
        "--burst",
        "400",
    ]
    .map(str::to_owned)
    .to_vec();
    if let Some(database) = database {
        args.extend(["--database".to_owned(), database.to_owned()]);
    }
    args
}

/// Every route, refused to a caller without credentials and to one whose key nobody has;
/// the probes open to all.
async fn strangers_are_refused(base: &str) {
    let routes = [
        (Method::POST, "/conversations"),
        (Method::GET, "/conversations/some-id"),
        (Method::POST, "/conversations/some-id/messages"),
        (Method::GET, "/conversations/some-id/approvals"),
        (Method::POST, "/conversations/some-id/approvals/call_1"),
    ];
    for key in [None, Some("agx_nobody_has_this_key")] {
        let stranger = Caller::new(base, key);
        for (method, path) in &routes {
            let request = stranger.request(method.clone(), path).json(&json!({ "message": "hi" }));
            let (status, challenge, body) = call(request).await;
            assert_eq!((status, code(&body)), (401, "unauthenticated"), "{method} {path}: {body}");
            assert!(challenge.starts_with("Bearer realm=\"agentix\""), "{challenge}");
            assert_eq!(challenge.contains("invalid_token"), key.is_some(), "{challenge}");
        }
        let streamed = stranger
            .request(Method::POST, "/conversations/some-id/messages")
            .header("accept", "text/event-stream")
            .json(&json!({ "message": "hi" }));
        assert_eq!(call(streamed).await.0, 401);
    }
    let stranger = Caller::new(base, None);
    for probe in ["/health", "/ready"] {
        assert_eq!(call(stranger.request(Method::GET, probe)).await.0, 200, "{probe}");
    }
}

/// The conversation's log, read by its owner.
async fn log_of(owner: &Caller<'_>, id: &str) -> Vec<Value> {
    let (status, body) = owner.read(id).await;
    assert_eq!(status, 200, "{body}");
    body["log"].as_array().unwrap().clone()
}

/// The one entry of `log` that records an answer to a waiting call.
fn resumed(log: &[Value]) -> &Value {
    let answers: Vec<&Value> = log.iter().filter(|entry| entry["entry"] == "resumed").collect();
    assert_eq!(answers.len(), 1, "{log:#?}");
    answers[0]
}

/// The whole scenario on one running server: strangers, other subjects, roles, JWTs, hosts
/// and origins — and the owners' own turns and approvals as before.
async fn scenario(server: &Running) {
    let base = server.base.as_str();
    strangers_are_refused(base).await;
    let (alice, bob, carol) = (
        Caller::new(base, Some(ALICE)),
        Caller::new(base, Some(BOB)),
        Caller::new(base, Some(CAROL)),
    );
    let (desk, ops) = (Caller::new(base, Some(DESK)), Caller::new(base, Some(OPS)));

    // The owner's turns, as before: JSON, streamed, and a call that waits for a person.
    let mine = alice.create().await;
    let (status, body) = alice.send(&mine, "Oslo").await;
    assert_eq!(
        (status, body["text"].as_str()),
        (200, Some("Here is the weather: Oslo: clear sky, 21."))
    );
    let (status, events) = alice.stream(&mine, "Bergen").await;
    assert!(status == 200 && events.contains("event: done"), "{events}");
    let (status, body) = alice.send(&mine, "email ola@example.no: lunch?").await;
    assert_eq!((status, code(&body)), (409, "awaiting_approval"), "{body}");
    let call_id = body["error"]["waiting"][0]["call_id"].as_str().unwrap().to_owned();

    // Another subject finds nothing there, on every route, streams included — the same answer
    // as for an id nobody has: no existence oracle.
    let nobodys = uuid::Uuid::new_v4().to_string();
    let (status, unknown) = bob.read(&nobodys).await;
    assert_eq!((status, code(&unknown)), (404, "unknown_conversation"), "{unknown}");
    for other in [&bob, &carol] {
        let (status, body) = other.read(&mine).await;
        assert_eq!(status, 404, "{body}");
        let same = body.to_string().replace(&mine, &nobodys);
        assert_eq!(same, unknown.to_string(), "another's reads as one that does not exist");
        assert_eq!(other.send(&mine, "Hi").await.0, 404);
        let (status, body) = other.stream(&mine, "Hi").await;
        assert!(status == 404 && body.contains("unknown_conversation"), "{status} {body}");
        assert_eq!(other.waiting(&mine).await.0, 404);
        let (status, body) = other.decide(&mine, &call_id, json!({ "decision": "approve" })).await;
        assert_eq!((status, code(&body)), (404, "unknown_conversation"), "{body}");
    }

    // A support desk reads every conversation, and does nothing to it.
    assert_eq!(desk.read(&mine).await.0, 200);
    assert_eq!(desk.waiting(&mine).await.0, 200);
    let (status, body) = desk.send(&mine, "Hi").await;
    assert_eq!((status, code(&body)), (403, "forbidden"), "{body}");
    let (status, body) = desk.decide(&mine, &call_id, json!({ "decision": "approve" })).await;
    assert_eq!((status, code(&body)), (403, "forbidden"), "{body}");

    // An owner without the approver role cannot answer its own waiting call; an operator who
    // approves can, and the log says who did.
    let bobs = bob.create().await;
    let (status, body) = bob.send(&bobs, "email kari@example.no: the report").await;
    assert_eq!(status, 409, "{body}");
    let bobs_call = body["error"]["waiting"][0]["call_id"].as_str().unwrap().to_owned();
    let (status, body) = bob.decide(&bobs, &bobs_call, json!({ "decision": "approve" })).await;
    assert_eq!((status, code(&body)), (403, "forbidden"), "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("`approver`"), "{body}");
    let (status, body) = bob.waiting(&bobs).await;
    assert_eq!((status, body["waiting"][0]["call_id"].as_str()), (200, Some(bobs_call.as_str())));
    let (status, body) = ops.decide(&bobs, &bobs_call, json!({ "decision": "approve" })).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(resumed(&log_of(&bob, &bobs).await)["by"], "ops");

    // The owner who approves answers its own call: the turn goes on, recorded as hers.
    let (status, body) = alice.decide(&mine, &call_id, json!({ "decision": "approve" })).await;
    assert_eq!(status, 200, "{body}");
    assert!(body["text"].as_str().unwrap().starts_with("Done: sent to ola@example.no"), "{body}");
    let log = log_of(&alice, &mine).await;
    assert_eq!(resumed(&log)["by"], "alice");

    // JWTs: alice's token reaches alice's conversation; a token that does not hold reaches
    // nothing, whatever it claims.
    let signed = Caller::new(base, Some(&hs256(good_claims())));
    assert_eq!(signed.read(&mine).await.0, 200, "the same subject, by a JWT");
    let other_key = EncodingKey::from_secret(b"another secret, not the server's");
    let mut expired = good_claims();
    expired["exp"] = json!(now() - 3600);
    let mut early = good_claims();
    early["nbf"] = json!(now() + 3600);
    let mut elsewhere = good_claims();
    elsewhere["aud"] = json!("another-service");
    let mut foreign = good_claims();
    foreign["iss"] = json!("https://evil.example");
    let without = |claim: &str| {
        let mut claims = good_claims();
        claims.as_object_mut().unwrap().remove(claim);
        hs256(claims)
    };
    let refused = [
        ("expired", hs256(expired)),
        ("not yet valid", hs256(early)),
        ("wrongly signed", token(Algorithm::HS256, &other_key, None, good_claims())),
        ("for another audience", hs256(elsewhere)),
        ("from another issuer", hs256(foreign)),
        ("without a subject", without("sub")),
        ("without an expiry", without("exp")),
        ("without an audience", without("aud")),
        ("without an issuer", without("iss")),
        ("alg: none", unsigned(&good_claims())),
        ("not a JWT at all", "eyJhbGciOi.broken.token".to_owned()),
    ];
    for (why, token) in &refused {
        let (status, challenge, body) = call(
            Caller::new(base, Some(token)).request(Method::GET, &format!("/conversations/{mine}")),
        )
        .await;
        assert_eq!((status, code(&body)), (401, "unauthenticated"), "{why}: {body}");
        assert!(challenge.contains("error=\"invalid_token\""), "{why}: {challenge}");
        assert!(!body.to_string().contains(token.as_str()), "{why}: the body repeats the token");
    }

    // A page that rebound its own name to the server, and a page of another site.
    let forged = alice.request(Method::GET, &format!("/conversations/{mine}"));
    let (status, _, body) =
        call(forged.header("host", format!("rebound.evil.example:{}", server.port))).await;
    assert_eq!((status, code(&body)), (403, "host_not_allowed"), "{body}");
    for forged in ["127.0.0.2", "localhost.evil.example", "user@localhost", "[::2]"] {
        let request = alice.request(Method::POST, "/conversations").header("host", forged);
        assert_eq!(call(request).await.0, 403, "{forged}");
    }
    // A probe names whatever host it was given (a pod's address), and learns nothing.
    let probe = alice.request(Method::GET, "/health").header("host", "10.1.2.3:8080");
    assert_eq!(call(probe).await.0, 200);
    let approve = json!({ "decision": "approve" });
    let from_evil = alice
        .request(Method::POST, &format!("/conversations/{bobs}/approvals/{bobs_call}"))
        .header("origin", "http://evil.example")
        .json(&approve);
    let (status, _, body) = call(from_evil).await;
    assert_eq!((status, code(&body)), (403, "origin_not_allowed"), "{body}");
    let from_itself = alice
        .request(Method::GET, &format!("/conversations/{mine}"))
        .header("origin", format!("http://127.0.0.1:{}", server.port));
    assert_eq!(call(from_itself).await.0, 200, "a page the server itself served");
}

/// What the process printed names the callers, never a credential.
fn no_secret_printed(server: &Running) {
    let printed = server.printed();
    assert!(printed.contains("subject=alice"), "requests logged with their subject:\n{printed}");
    assert!(printed.contains("subject=bob") && printed.contains("status=403"), "{printed}");
    for secret in [ALICE, BOB, CAROL, DESK, OPS, SECRET, &hs256(good_claims())[..40]] {
        assert!(!printed.contains(secret), "`{secret}` was printed:\n{printed}");
    }
    for key in [ALICE, BOB] {
        assert!(!printed.contains(&ApiKeys::hash(key)[7..]), "a key's hash was printed");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_sqlite_strangers_other_subjects_and_forged_requests_get_nothing_and_owners_go_on() {
    let dir = TempDir::new("sqlite");
    let url = format!("sqlite://{}", dir.0.join("chats.db").display());
    let args = scenario_args(&key_file(&dir.0), Some(&url));
    let server = start(&args.iter().map(String::as_str).collect::<Vec<_>>());
    scenario(&server).await;
    no_secret_printed(&server);
    drop(server);
    // The store keeps each conversation's owner and who answered each approval.
    let store = agentix_store::Store::open(&url).await.unwrap();
    assert_eq!(store.unowned().await.unwrap(), 0);
    store.close().await;
}

#[cfg(feature = "postgres-tests")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_postgres_strangers_other_subjects_and_forged_requests_get_nothing_and_owners_go_on() {
    let dir = TempDir::new("postgres");
    // A password in the URL (the test server trusts loopback, so any does): never printed.
    let url = agentix_test_support::postgres_database("security").replacen(
        "postgres://agentix@",
        "postgres://agentix:pg-s3cret-password@",
        1,
    );
    let args = scenario_args(&key_file(&dir.0), Some(&url));
    let server = start(&args.iter().map(String::as_str).collect::<Vec<_>>());
    scenario(&server).await;
    no_secret_printed(&server);
    let printed = server.printed();
    assert!(printed.contains("agentix:***@"), "the URL is shown, masked:\n{printed}");
    assert!(!printed.contains("pg-s3cret-password"), "{printed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_memory_the_same() {
    let dir = TempDir::new("memory");
    let args = scenario_args(&key_file(&dir.0), None);
    let server = start(&args.iter().map(String::as_str).collect::<Vec<_>>());
    scenario(&server).await;
    no_secret_printed(&server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_signed_by_public_keys_are_taken_from_a_pem_or_a_jwks_and_nothing_else() {
    let keys = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/keys");
    let read = |name: &str| std::fs::read(keys.join(name)).unwrap();
    let rsa = EncodingKey::from_rsa_pem(&read("rsa-private.pem")).unwrap();
    let ec = EncodingKey::from_ec_pem(&read("ec-private.pem")).unwrap();
    let jwks = keys.join("jwks.json");
    let server = start(&["--jwt-jwks", jwks.to_str().unwrap(), "--jwt-audience", AUDIENCE]);
    let by_rsa = token(Algorithm::RS256, &rsa, Some("rsa-1"), good_claims());
    let by_ec = token(Algorithm::ES256, &ec, Some("ec-1"), good_claims());
    for taken in [&by_rsa, &by_ec] {
        let caller = Caller::new(&server.base, Some(taken));
        let id = caller.create().await;
        assert_eq!(caller.send(&id, "Oslo").await.0, 200);
    }
    let refused = [
        (
            "the RSA key under the EC key's kid",
            token(Algorithm::RS256, &rsa, Some("ec-1"), good_claims()),
        ),
        ("a kid the set does not have", token(Algorithm::ES256, &ec, Some("ec-2"), good_claims())),
        ("no kid, and two keys to choose from", token(Algorithm::ES256, &ec, None, good_claims())),
        (
            "HS256 keyed with the public key (key confusion)",
            token(
                Algorithm::HS256,
                &EncodingKey::from_secret(&read("rsa-public.pem")),
                Some("rsa-1"),
                good_claims(),
            ),
        ),
    ];
    for (why, token) in &refused {
        let (status, _, body) =
            call(Caller::new(&server.base, Some(token)).request(Method::POST, "/conversations"))
                .await;
        assert_eq!(status, 401, "{why}: {body}");
    }
    drop(server);

    let pem = keys.join("ec-public.pem");
    let server = start(&["--jwt-key", pem.to_str().unwrap(), "--jwt-audience", AUDIENCE]);
    let caller = Caller::new(&server.base, Some(&by_ec));
    assert_eq!(call(caller.request(Method::POST, "/conversations")).await.0, 201);
    let other = Caller::new(&server.base, Some(&by_rsa));
    assert_eq!(call(other.request(Method::POST, "/conversations")).await.0, 401, "not its key");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_from_one_key_is_429_while_another_keys_turns_go_on() {
    let dir = TempDir::new("flood");
    let keys = key_file(&dir.0);
    let server = start(&[
        "--keys",
        keys.to_str().unwrap(),
        "--rate",
        "5",
        "--burst",
        "5",
        "--turns",
        "1",
        "--demo-latency",
        "300",
    ]);
    let (flooder, bystander) =
        (Caller::new(&server.base, Some(BOB)), Caller::new(&server.base, Some(ALICE)));
    let flood = async {
        let requests = (0..60).map(|_| call(flooder.request(Method::GET, "/conversations/x")));
        futures::future::join_all(requests).await
    };
    let bystanders_turns = async {
        let mut statuses = Vec::new();
        for city in ["Oslo", "Bergen"] {
            let id = bystander.create().await;
            statuses.push(bystander.send(&id, city).await.0);
        }
        statuses
    };
    let (flooded, statuses) = tokio::join!(flood, bystanders_turns);
    assert_eq!(statuses, [200, 200], "the other key's turns went on");
    let limited =
        flooded.iter().filter(|(status, _, body)| *status == 429 && code(body) == "rate_limited");
    assert!(limited.count() >= 50, "{:?}", flooded.iter().map(|f| f.0).collect::<Vec<_>>());
    // The bucket refilled a little while the other turns ran: a few more, and it is empty again.
    let mut retry_after = None;
    for _ in 0..20 {
        let response = flooder.request(Method::GET, "/conversations/x").send().await.unwrap();
        if response.status() == 429 {
            retry_after = Some(response.headers()["retry-after"].to_str().unwrap().to_owned());
            break;
        }
    }
    let retry_after: u64 = retry_after.expect("a request refused").parse().unwrap();
    assert!((1..=2).contains(&retry_after), "{retry_after}");

    // Turns at once: one each; a second while the first runs is refused, the first finishes.
    let runner = Caller::new(&server.base, Some(CAROL));
    let (one, two) = (runner.create().await, runner.create().await);
    let (first, second) = tokio::join!(runner.send(&one, "Oslo"), async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        runner.send(&two, "Bergen").await
    });
    assert_eq!(first.0, 200, "{first:?}");
    assert_eq!((second.0, code(&second.1)), (429, "too_many_turns"), "{second:?}");
    assert_eq!(runner.send(&two, "Bergen").await.0, 200, "once the first ended");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_stalls_its_headers_is_cut() {
    let server = start(&["--anonymous", "--header-timeout", "1"]);
    let mut stalled = std::net::TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    stalled.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ").unwrap();
    stalled.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let started = std::time::Instant::now();
    let mut rest = Vec::new();
    // The server closes it (after a 408 or without a word): the read ends, not its timeout.
    let read = stalled.read_to_end(&mut rest);
    assert!(read.is_ok(), "the connection was not closed: {read:?}");
    assert!(started.elapsed() < Duration::from_secs(5), "cut after {:?}", started.elapsed());
    let answered = String::from_utf8_lossy(&rest);
    assert!(answered.is_empty() || answered.starts_with("HTTP/1.1 408"), "{answered}");
    // Meanwhile a request that sends its headers is served.
    let (status, _, _) =
        call(Caller::new(&server.base, None).request(Method::GET, "/health")).await;
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_door_is_behind_the_same_identity_and_host_checks() {
    let dir = TempDir::new("mcp");
    let keys = key_file(&dir.0);
    let server = start(&["--keys", keys.to_str().unwrap(), "--mcp"]);
    let url = format!("{}/mcp", server.base);
    let tools = agentix_mcp::McpServer::http("agent", &url).bearer(ALICE).connect().await.unwrap();
    let names = tools.names();
    assert!(names.contains(&"agent__get_weather".to_owned()), "{names:?}");
    for refused in [None, Some("agx_nobody_has_this_key")] {
        let mut server = agentix_mcp::McpServer::http("agent", &url);
        if let Some(key) = refused {
            server = server.bearer(key);
        }
        assert!(server.connect().await.is_err(), "{refused:?}");
    }
    let initialize = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": { "name": "attacker", "version": "1" } } });
    let raw = Caller::new(&server.base, Some(ALICE));
    let (status, challenge, _) =
        call(Caller::new(&server.base, None).request(Method::POST, "/mcp").json(&initialize)).await;
    assert_eq!(status, 401, "{challenge}");
    let forged = raw
        .request(Method::POST, "/mcp")
        .header("host", "rebound.evil.example")
        .header("accept", "application/json, text/event-stream")
        .json(&initialize);
    let (status, _, body) = call(forged).await;
    assert_eq!((status, code(&body)), (403, "host_not_allowed"), "{body}");
    let from_evil = raw
        .request(Method::POST, "/mcp")
        .header("origin", "https://evil.example")
        .header("accept", "application/json, text/event-stream")
        .json(&initialize);
    assert_eq!(call(from_evil).await.0, 403);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowed_origin_gets_cors_and_its_preflight_needs_no_credentials() {
    let dir = TempDir::new("cors");
    let keys = key_file(&dir.0);
    let app = "https://app.example.com";
    let server = start(&["--keys", keys.to_str().unwrap(), "--cors-origin", app]);
    let client = support::client();
    let preflight = |origin: &str| {
        client
            .request(Method::OPTIONS, format!("{}/conversations", server.base))
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header("access-control-request-headers", "authorization, content-type")
    };
    let response = preflight(app).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["access-control-allow-origin"], app);
    assert_eq!(preflight("https://evil.example").send().await.unwrap().status(), 403);
    let created = Caller::new(&server.base, Some(ALICE))
        .request(Method::POST, "/conversations")
        .header("origin", app)
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    assert_eq!(created.headers()["access-control-allow-origin"], app);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_from_before_owners_opens_and_its_conversations_go_to_the_subject_named() {
    let dir = TempDir::new("upgrade");
    let url = format!("sqlite://{}", dir.0.join("chats.db").display());
    // A conversation with a turn in it, in a store taken back to how version 3 left it.
    let store = agentix_store::Store::open(&url).await.unwrap();
    store.create("old-chat", &agentix::Conversation::new()).await.unwrap();
    let mut stored = store.load("old-chat").await.unwrap();
    agentix_server::demo::demo_agent().run(&mut stored.conversation, "Oslo").await.unwrap();
    store.commit("old-chat", stored.version, &stored.conversation, 0).await.unwrap();
    store.close().await;
    agentix_test_support::undo_schema_version_4(&url).await;
    let keys = key_file(&dir.0);

    // Without a subject named, nobody owns it: the server says so, and alice does not see it.
    let server = start(&["--keys", keys.to_str().unwrap(), "--database", &url]);
    assert!(server.printed().contains("1 conversation(s) have no owner"), "{}", server.printed());
    assert_eq!(Caller::new(&server.base, Some(ALICE)).read("old-chat").await.0, 404);
    drop(server);

    let server =
        start(&["--keys", keys.to_str().unwrap(), "--database", &url, "--unowned-owner", "alice"]);
    assert!(
        server.printed().contains("1 conversation(s) without an owner now belong to `alice`"),
        "{}",
        server.printed()
    );
    let alice = Caller::new(&server.base, Some(ALICE));
    let log = log_of(&alice, "old-chat").await;
    assert_eq!(log.len(), stored.conversation.log().len(), "{log:#?}");
    assert_eq!(alice.send("old-chat", "Bergen").await.0, 200);
    assert_eq!(Caller::new(&server.base, Some(BOB)).read("old-chat").await.0, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anonymous_lets_in_those_without_credentials_and_refuses_credentials_it_cannot_check() {
    let dir = TempDir::new("anonymous");
    let keys = key_file(&dir.0);
    let server = start(&["--keys", keys.to_str().unwrap(), "--anonymous"]);
    assert!(server.printed().contains("ANONYMOUS ACCESS"), "{}", server.printed());
    let anonymous = Caller::new(&server.base, None);
    let id = anonymous.create().await;
    assert_eq!(anonymous.send(&id, "Oslo").await.0, 200);
    // Not alice's: another subject's, as any.
    assert_eq!(Caller::new(&server.base, Some(ALICE)).read(&id).await.0, 404);
    let refused = [
        ("a key nobody has", "Bearer agx_nobody_has_this_key".to_owned()),
        ("a JWT, with no JWT key configured", format!("Bearer {}", hs256(good_claims()))),
        ("Basic", "Basic YWxpY2U6cGFzc3dvcmQ=".to_owned()),
    ];
    for (why, header) in refused {
        let request = anonymous.request(Method::GET, &format!("/conversations/{id}"));
        let (status, _, body) = call(request.header("authorization", header)).await;
        assert_eq!((status, code(&body)), (401, "unauthenticated"), "{why}: {body}");
    }
}
