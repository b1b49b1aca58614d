//! Tripwires: a `#[hook(tripwire)]` function taking the request (and the turn, shared), with a
//! timeout or `on_error = skip`, and a hand-written `on::Tripwire`; each registered with
//! `.hook` beside the other hooks, in a policy too.

use agentix::{Agent, ScriptedModel, Turn, hook, model::ModelRequest, verdict::Trip};

#[hook(tripwire)]
async fn moderation(request: &ModelRequest) -> Trip {
    if request.messages.is_empty() { Trip::trip("nothing to check") } else { Trip::Pass }
}

#[hook(tripwire, timeout = "200ms", on_error = skip)]
async fn classifier(request: &ModelRequest, turn: &Turn) -> Trip {
    let _ = (request, turn.step());
    Trip::Pass
}

struct Blocklist(Vec<String>);

impl agentix::on::Tripwire for Blocklist {
    async fn tripwire(&self, request: &ModelRequest, _turn: &Turn) -> Trip {
        let text: String = request.messages.iter().map(|message| message.text()).collect();
        match self.0.iter().find(|word| text.contains(word.as_str())) {
            Some(word) => Trip::trip(format!("`{word}` is blocked")),
            None => Trip::Pass,
        }
    }
}

fn main() {
    let agent = Agent::builder(ScriptedModel::new().text("ok"))
        .hook(moderation)
        .hook(classifier)
        .hook(Blocklist(vec!["secret".into()]))
        .build();
    let mut conversation = agentix::Conversation::new();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let reply = runtime.block_on(agent.run(&mut conversation, "hello")).unwrap();
    assert_eq!(reply.joined_text(), "ok");
    let blocked = runtime.block_on(agent.run(&mut conversation, "the secret"));
    assert!(matches!(blocked, Err(agentix::Error::Tripped { hook: "Blocklist", .. })));
}
