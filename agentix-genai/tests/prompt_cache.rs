//! The prompt cache pays: over three turns that each inject something different, every request
//! Anthropic receives repeats the previous one's bytes up to its cache breakpoints on the system
//! prompt and on the last message of the earlier turns, and a turn's next step repeats its
//! previous request's bytes up to that request's end, its third breakpoint.

mod support;

use agentix::event::EventKind;
use agentix::{Agent, AssistantMessage, Conversation, ToolCall};
use serde_json::{Value, json};
use support::{Reply, Server, anthropic_json, model};
use tests::{Action, Probe, Record, Weather};

const MARKER: &[u8] = b"\"cache_control\"";

/// Where each cache breakpoint is in a request's bytes: the end of the marked block's content,
/// where `,"cache_control":…` follows it.
fn markers(body: &[u8]) -> Vec<usize> {
    let found = body.windows(MARKER.len()).enumerate().filter(|(_, window)| *window == MARKER);
    found
        .map(|(at, _)| {
            assert_eq!(body[at - 1], b',', "the marker follows the block's content");
            at - 1
        })
        .collect()
}

/// Whether a message carries a cache breakpoint on any of its blocks.
fn marked(message: &Value) -> bool {
    message["content"]
        .as_array()
        .is_some_and(|blocks| blocks.iter().any(|block| block.get("cache_control").is_some()))
}

/// A message's text, whether written as blocks or as a plain string.
fn texts(message: &Value) -> Vec<&str> {
    match &message["content"] {
        Value::String(text) => vec![text.as_str()],
        blocks => {
            blocks.as_array().unwrap().iter().filter_map(|block| block["text"].as_str()).collect()
        }
    }
}

#[tokio::test]
async fn each_request_repeats_the_previous_ones_bytes_up_to_its_breakpoints() {
    let usage = json!({ "input_tokens": 30, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 900, "output_tokens": 9 });
    let call = AssistantMessage::default().with_tool_call(ToolCall::new(
        "toolu_1",
        "get_weather",
        json!({ "city": "Oslo" }),
    ));
    let server = Server::start(vec![
        Reply::json(anthropic_json(
            &AssistantMessage::text("Hello! How can I help?"),
            usage.clone(),
        )),
        Reply::json(anthropic_json(&call, usage.clone())),
        Reply::json(anthropic_json(&AssistantMessage::text("It is sunny in Oslo."), usage.clone())),
        Reply::json(anthropic_json(&AssistantMessage::text("You are welcome."), usage.clone())),
    ])
    .await;
    let injections = [
        "Memory: the user likes short answers.",
        "Clock: 09:14.",
        "Clock: 09:15, and it rains in Bergen.",
    ];
    let record = Record::new();
    let mut probe = Probe::new("memory", &record);
    for injection in injections {
        probe = probe.on(EventKind::Pre, Action::Edit(injection.into()));
    }
    let agent = Agent::builder(model("anthropic:claude-sonnet-4-5", &server.base))
        .system("You are a concise assistant.")
        .tool(Weather::default())
        .hook(probe)
        .build();
    let mut conversation = Conversation::new();
    for question in ["Hi!", "Weather in Oslo?", "Thanks."] {
        agent.run(&mut conversation, question).await.unwrap();
    }

    let received = server.received();
    assert_eq!(received.len(), 4, "one request for turns 1 and 3, two for turn 2");
    let bodies: Vec<&[u8]> = received.iter().map(|request| &request.body[..]).collect();
    // The turn each request belongs to, and how many messages of earlier turns it carries.
    let turns: [(usize, usize); 4] = [(0, 0), (1, 2), (1, 2), (2, 6)];
    for (request, &(turn, history)) in received.iter().zip(&turns) {
        let json = request.json();
        assert_eq!(
            json["system"],
            json!([{ "type": "text", "text": "You are a concise assistant.", "cache_control": { "type": "ephemeral" } }]),
            "the system prompt is the first breakpoint"
        );
        let messages = json["messages"].as_array().unwrap();
        let breakpoints: Vec<usize> =
            (0..messages.len()).filter(|&at| marked(&messages[at])).collect();
        // The end of the earlier turns (a first turn has none), and the end of the request.
        let mut expected: Vec<usize> = history.checked_sub(1).into_iter().collect();
        expected.push(messages.len() - 1);
        assert_eq!(breakpoints, expected, "request of turn {}", turn + 1);
        // After the earlier turns: this turn's user message, then its injection.
        assert_eq!(messages[history]["role"], "user");
        assert_eq!(texts(&messages[history]), [["Hi!", "Weather in Oslo?", "Thanks."][turn]]);
        assert_eq!(
            texts(&messages[history + 1]),
            [injections[turn]],
            "the injection follows the user message"
        );
        let marker_count = markers(&request.body).len();
        assert_eq!(marker_count, 1 + breakpoints.len(), "no breakpoint but these");
    }

    // Where each request's breakpoints are in its bytes: the system's, the earlier turns' (if
    // any), the request's end.
    let stable = |at: usize| {
        let marks = markers(bodies[at]);
        marks[..marks.len() - 1].to_vec()
    };
    for pair in 0..bodies.len() - 1 {
        let (before, after) = (bodies[pair], bodies[pair + 1]);
        let same_prefix = |end: usize| {
            assert_eq!(
                String::from_utf8_lossy(&after[..end]),
                String::from_utf8_lossy(&before[..end]),
                "request {} changed the bytes before request {}'s breakpoint at {end}",
                pair + 1,
                pair
            );
        };
        // The system's breakpoint and the earlier turns' hold from turn to turn.
        for end in stable(pair) {
            same_prefix(end);
        }
        // The request's end holds for the turn's next step.
        if turns[pair].0 == turns[pair + 1].0 {
            same_prefix(*markers(before).last().unwrap());
        }
        if let (Some(&end), Some(&next)) = (stable(pair).get(1), stable(pair + 1).get(1)) {
            assert!(next >= end, "the cached prefix only grows");
        }
        let injection = injections[turns[pair].0].as_bytes();
        let end = *stable(pair).last().unwrap();
        assert!(
            !before[..end].windows(injection.len()).any(|window| window == injection),
            "the injection is past the breakpoints that hold from turn to turn"
        );
    }
    // Turn 3's prefix holds all of turn 2's exchange, and none of turn 2's injection.
    let last = received[3].json();
    let history = &last["messages"].as_array().unwrap()[..6];
    assert!(
        !serde_json::to_string(history).unwrap().contains(injections[1]),
        "a transient injection is not history"
    );
}
