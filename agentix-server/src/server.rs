//! The served agent as a router to mount: [`Server::builder`] puts the routes behind the
//! checks — host and origin, identity, limits — and counts the turns a shutdown waits on.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use agentix::AnyAgent;
use agentix_store::Store;
use axum::Router;
use tokio::sync::Notify;

use crate::Access;
use crate::hosts::{CheckHosts, Hosts, Origins};
use crate::identity::{Authenticate, AuthenticateLayer};
use crate::limits::{Counters, Limits, rate_limit};
use crate::routes::App;

/// A served agent's routes, and what its shutdown waits for.
///
/// ```
/// use agentix_server::identity::{ApiKeys, Authenticate, Identity, Jwt};
/// use agentix_server::{Access, Server, demo};
///
/// let keys = ApiKeys::new().with_key("agx_secret", Identity::new("alice").with_role("approver"));
/// let server = Server::builder(demo::demo_agent())
///     .authenticate(keys.or(Jwt::hs256(b"the secret").audience("agentix")))
///     .access(Access::new().read_all("support"))
///     .build();
/// // Mounted in an app of one's own, beside its routes.
/// let app = axum::Router::new().nest("/agent", server.router());
/// ```
pub struct Server {
    router: Router,
    turns: Arc<Turns>,
}

/// How a [`Server`] is put together: see [`Server::builder`].
pub struct ServerBuilder<R> {
    agent: R,
    store: Option<Store>,
    access: Access,
    limits: Limits,
    hosts: Hosts,
    origins: Origins,
    authenticate: Option<Box<dyn FnOnce(Router) -> Router + Send>>,
    beside: Router,
}

impl Server {
    /// A server of `agent`'s turns: conversations in memory, every request's identity read from
    /// its extensions (put there by [`authenticate`](ServerBuilder::authenticate)'s layer, or the
    /// app's own), [`Access::default`], [`Limits::default`], loopback hosts, no cross-origin
    /// requests.
    pub fn builder<R: AnyAgent + 'static>(agent: R) -> ServerBuilder<R> {
        ServerBuilder {
            agent,
            store: None,
            access: Access::default(),
            limits: Limits::default(),
            hosts: Hosts::default(),
            origins: Origins::default(),
            authenticate: None,
            beside: Router::new(),
        }
    }

    /// The routes, behind their checks, to serve or to mount in an app of one's own (a clone:
    /// routers are cheap to clone).
    pub fn router(&self) -> Router {
        self.router.clone()
    }

    /// Starts no more turns: a message or an approval is answered `503 shutting_down` from now
    /// on (the turns running go on).
    pub fn stop(&self) {
        self.turns.stopping.store(true, Ordering::SeqCst);
    }

    /// Waits until no turn runs, or `deadline` has come: whether every turn finished. A turn
    /// cut there (the process exits) leaves its whole steps in the store, as a kill does.
    pub async fn drain(&self, deadline: tokio::time::Instant) -> bool {
        let turns = &self.turns;
        let all_ended = async {
            loop {
                let ended = turns.ended.notified();
                if turns.running.load(Ordering::SeqCst) == 0 {
                    return;
                }
                ended.await;
            }
        };
        tokio::time::timeout_at(deadline, all_ended).await.is_ok()
    }

    /// How many turns are running.
    pub fn running_turns(&self) -> usize {
        self.turns.running.load(Ordering::Acquire)
    }
}

impl<R: AnyAgent + 'static> ServerBuilder<R> {
    /// Keeps the conversations in `store` (SQLite, or PostgreSQL shared by many servers):
    /// each with its owner, each step committed as it runs.
    pub fn store(mut self, store: Store) -> Self {
        self.store = Some(store);
        self
    }

    /// Authenticates every request with `authenticator` ([`AuthenticateLayer`]) before the
    /// routes see it: `401` without an identity. Without it, the routes read the identity an
    /// app's own middleware put in the request's extensions (and answer `401` to one without).
    pub fn authenticate<A: Authenticate>(mut self, authenticator: A) -> Self {
        self.authenticate = Some(Box::new(move |routes: Router| {
            routes.layer(AuthenticateLayer::new(authenticator))
        }));
        self
    }

    /// Who may read, send to and answer which conversations.
    pub fn access(mut self, access: Access) -> Self {
        self.access = access;
        self
    }

    /// How much each subject may ask.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The names the server answers to (`Host`): the loopback names unless told.
    pub fn hosts(mut self, hosts: Hosts) -> Self {
        self.hosts = hosts;
        self
    }

    /// The origins whose pages may call the server from a browser (with CORS); none unless
    /// told.
    pub fn origins(mut self, origins: Origins) -> Self {
        self.origins = origins;
        self
    }

    /// Serves `routes` beside the conversations', behind the same checks, identity and limits
    /// (the agent's tools over MCP, say: `agentix_mcp::McpService::router`).
    pub fn beside(mut self, routes: Router) -> Self {
        self.beside = self.beside.merge(routes);
        self
    }

    /// The server.
    pub fn build(self) -> Server {
        let turns = Arc::new(Turns::default());
        let counters = Arc::new(Counters::new(self.limits));
        let app = Arc::new(App::new(
            self.agent,
            self.store,
            Arc::clone(&turns),
            self.access,
            Arc::clone(&counters),
        ));
        // Innermost first: the limits see the identity the authenticator found, and refuse a
        // request with none (routes served beside the conversations' ask for none themselves).
        let mut guarded = Arc::clone(&app)
            .routes()
            .merge(self.beside)
            .layer(axum::middleware::from_fn_with_state(counters, rate_limit));
        if let Some(authenticate) = self.authenticate {
            guarded = authenticate(guarded);
        }
        // A preflight carries no credentials: CORS answers it before the identity is asked.
        if let Some(cors) = self.origins.cors() {
            guarded = guarded.layer(cors);
        }
        let guarded = guarded.layer(CheckHosts::new(self.hosts, self.origins));
        // The probes say nothing of any conversation, and a probe names the host it was given
        // (a pod's address): no check of theirs.
        let router = app.probes().merge(guarded);
        Server { router, turns }
    }
}

/// The turns running, for a shutdown that lets them finish.
#[derive(Default)]
pub(crate) struct Turns {
    running: AtomicUsize,
    ended: Notify,
    /// Set at shutdown: no turn starts after it.
    stopping: AtomicBool,
}

impl Turns {
    pub(crate) fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }
}

/// Counts a turn as running while it lives.
pub(crate) struct TurnRunning(Arc<Turns>);

impl TurnRunning {
    pub(crate) fn new(turns: &Arc<Turns>) -> Self {
        turns.running.fetch_add(1, Ordering::SeqCst);
        TurnRunning(Arc::clone(turns))
    }
}

impl Drop for TurnRunning {
    fn drop(&mut self) {
        if self.0.running.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.ended.notify_waiters();
        }
    }
}
