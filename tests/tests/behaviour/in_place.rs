//! A `#[hook]` function whose body never awaits runs in place — the loop calls it with no future
//! in between — and one that awaits runs as a future. Nothing else tells them apart: on one
//! event they run in declaration order, their edits reach the next hook, and a panic in either
//! kind, at any event, is named.

use std::sync::Mutex;

use agentix::event::EventKind::{self, *};
use agentix::on;
use agentix::{
    Agent, AssistantMessage, Conversation, Error, Outcome, ScriptedModel, ToolCall, ToolResult,
    Turn, hook, model::ModelRequest,
};
use serde_json::json;
use tests::{EVERY_EVENT_FIRED, Weather, assert_log_consistent, every_event_model};

fn model() -> ScriptedModel {
    every_event_model("sunny")
}

/// Hooks named `$name` (one module), one at each sequential event, that push `(event, name)`
/// onto `$ran` after doing `$($wait)*`: nothing, or an await.
macro_rules! recording_hooks {
    ($name:ident, $ran:ident, $($wait:tt)*) => {
        mod $name {
            use super::*;

            fn ran(event: EventKind) {
                $ran.lock().unwrap().push((event, stringify!($name)));
            }

            #[hook(pre)]
            pub async fn pre(_turn: &mut Turn) { $($wait)* ran(Pre); }
            #[hook(before_model)]
            pub async fn before_model(_request: &mut ModelRequest) { $($wait)* ran(BeforeModel); }
            #[hook(after_model)]
            pub async fn after_model(_message: &mut AssistantMessage) { $($wait)* ran(AfterModel); }
            #[hook(before_tool)]
            pub async fn before_tool(_call: &mut ToolCall) { $($wait)* ran(BeforeTool); }
            #[hook(after_tool)]
            pub async fn after_tool(_result: &mut ToolResult) { $($wait)* ran(AfterTool); }
            #[hook(tool_error)]
            pub async fn tool_error(_result: &mut ToolResult) { $($wait)* ran(ToolError); }
            #[hook(before_final)]
            pub async fn before_final(_message: &mut AssistantMessage) { $($wait)* ran(BeforeFinal); }
            #[hook(post)]
            pub async fn post(_outcome: &Outcome) { $($wait)* ran(Post); }
        }
    };
}

static RAN: Mutex<Vec<(EventKind, &str)>> = Mutex::new(Vec::new());

recording_hooks!(first, RAN,);
recording_hooks!(second, RAN, tokio::task::yield_now().await;);
recording_hooks!(third, RAN,);

macro_rules! all_events {
    ($builder:expr, $($module:ident),*) => {
        $builder$(
            .hook($module::pre)
            .hook($module::before_model)
            .hook($module::after_model)
            .hook($module::before_tool)
            .hook($module::after_tool)
            .hook($module::tool_error)
            .hook($module::before_final)
            .hook($module::post)
        )*
    };
}

#[test]
fn a_body_without_await_runs_in_place_and_any_await_makes_a_future() {
    #[hook(before_tool)]
    async fn plain(call: &mut ToolCall) {
        call.name.make_ascii_lowercase();
    }
    #[hook(before_tool)]
    async fn formatting(call: &mut ToolCall) {
        assert!(!call.name.is_empty(), "{}", format!("unnamed call {}", call.id));
    }
    #[hook(before_tool)]
    #[allow(clippy::needless_return)]
    async fn with_a_lint_level(_call: &mut ToolCall) {
        return;
    }
    #[hook(before_tool)]
    async fn awaiting(_call: &mut ToolCall) {
        tokio::task::yield_now().await;
    }
    // A macro `#[hook]` cannot see into may expand to an `await`: it counts as one, unless it
    // is one of the standard formatting, assertion and logging macros.
    macro_rules! pause {
        () => {
            tokio::task::yield_now().await
        };
    }
    #[hook(before_tool)]
    async fn awaiting_in_a_macro(_call: &mut ToolCall) {
        pause!();
    }
    #[hook(before_tool)]
    async fn awaiting_in_an_async_block(_call: &mut ToolCall) {
        let later = async { tokio::task::yield_now().await };
        drop(later);
    }
    // Any other attribute may mean something else on a plain function than on an `async` one.
    #[hook(before_tool)]
    #[must_use]
    async fn with_another_attribute(_call: &mut ToolCall) {}
    #[hook(pre)]
    async fn plain_pre(_turn: &mut Turn) {}
    #[hook(post)]
    async fn plain_post(_outcome: &Outcome) {}

    let runs_in_place = [
        ("plain", <plain as on::BeforeTool>::IN_PLACE),
        ("with_a_lint_level", <with_a_lint_level as on::BeforeTool>::IN_PLACE),
        ("formatting", <formatting as on::BeforeTool>::IN_PLACE),
        ("plain_pre", <plain_pre as on::Pre>::IN_PLACE),
        ("plain_post", <plain_post as on::Post>::IN_PLACE),
        ("awaiting", <awaiting as on::BeforeTool>::IN_PLACE),
        ("awaiting_in_a_macro", <awaiting_in_a_macro as on::BeforeTool>::IN_PLACE),
        ("awaiting_in_an_async_block", <awaiting_in_an_async_block as on::BeforeTool>::IN_PLACE),
        ("with_another_attribute", <with_another_attribute as on::BeforeTool>::IN_PLACE),
    ];
    assert_eq!(
        runs_in_place,
        [
            ("plain", true),
            ("with_a_lint_level", true),
            ("formatting", true),
            ("plain_pre", true),
            ("plain_post", true),
            ("awaiting", false),
            ("awaiting_in_a_macro", false),
            ("awaiting_in_an_async_block", false),
            ("with_another_attribute", false),
        ]
    );
}

#[tokio::test]
async fn hooks_in_place_and_awaiting_hooks_run_in_declaration_order_on_one_event() {
    // 24 hooks: the chain's first chunk of 16 fills, and the event runs over both chunks.
    let agent =
        all_events!(Agent::builder(model()).tool(Weather::default()), first, second, third).build();
    let mut conversation = Conversation::new();
    assert_eq!(agent.run(&mut conversation, "weather?").await.unwrap().joined_text(), "sunny");

    let expected: Vec<(EventKind, &str)> = EVERY_EVENT_FIRED
        .into_iter()
        .flat_map(|event| [(event, "first"), (event, "second"), (event, "third")])
        .collect();
    assert_eq!(*RAN.lock().unwrap(), expected);
    assert_log_consistent(conversation.log());
}

/// An edit one kind of hook makes is what the other kind sees next, either way round.
#[tokio::test]
async fn edits_pass_between_hooks_in_place_and_awaiting_hooks() {
    #[hook(before_tool)]
    async fn to_bergen(call: &mut ToolCall) {
        call.arguments = json!({ "city": "Bergen" });
    }
    #[hook(before_tool)]
    async fn shout_the_city(call: &mut ToolCall) {
        tokio::task::yield_now().await;
        let city = call.arguments["city"].as_str().unwrap_or_default().to_uppercase();
        call.arguments = json!({ "city": city });
    }
    #[hook(after_tool)]
    async fn tag(result: &mut ToolResult) {
        result.output.push_str(" [checked]");
    }

    let model = ScriptedModel::new().tool_call("get_weather", json!({ "city": "Oslo" })).text("ok");
    let agent = Agent::builder(&model)
        .tool(Weather::default())
        .hook(to_bergen)
        .hook(shout_the_city)
        .hook(tag)
        .build();
    agent.run(&mut Conversation::new(), "weather?").await.unwrap();
    let result = &tests::tool_results(&model.requests()[1])[0];
    assert_eq!(result.output, "sunny in BERGEN [checked]");
}

/// One module per event with a hook that panics in place and one that panics after an await.
macro_rules! panicking_hooks {
    ($($event:ident: $module:ident ($($param:tt)*);)*) => {$(
        mod $module {
            use super::*;

            #[hook($module)]
            pub async fn in_place($($param)*) {
                panic!("in place");
            }
            #[hook($module)]
            pub async fn awaiting($($param)*) {
                tokio::task::yield_now().await;
                panic!("awaiting");
            }
        }
    )*};
}

panicking_hooks! {
    Pre: pre(_turn: &mut Turn);
    BeforeModel: before_model(_request: &mut ModelRequest);
    AfterModel: after_model(_message: &mut AssistantMessage);
    BeforeTool: before_tool(_call: &mut ToolCall);
    AfterTool: after_tool(_result: &mut ToolResult);
    ToolError: tool_error(_result: &mut ToolResult);
    BeforeFinal: before_final(_message: &mut AssistantMessage);
    Post: post(_outcome: &Outcome);
}

/// A `before_tool` hook that panics refuses the call, whichever kind it is, and the turn goes on.
#[tokio::test]
async fn a_before_tool_panic_in_either_kind_of_hook_refuses_the_call() {
    macro_rules! refused {
        ($hook:ident, $message:literal) => {{
            let model = model();
            let weather = Weather::default();
            let ran = std::sync::Arc::clone(&weather.calls);
            let agent = Agent::builder(&model).tool(weather).hook(before_tool::$hook).build();
            let mut conversation = Conversation::new();
            agent.run(&mut conversation, "weather?").await.unwrap();
            assert!(ran.lock().unwrap().is_empty(), "a refused call never runs");
            for result in tests::tool_results(&model.requests()[1]) {
                let Some(agentix::message::ToolFailure::Rejected { by, reason }) = &result.error
                else {
                    panic!("{result:?}");
                };
                assert_eq!(by, stringify!($hook));
                let said =
                    concat!("the before_tool hook `", stringify!($hook), "` panicked: ", $message);
                assert!(reason.starts_with(said), "{reason}");
            }
            assert_log_consistent(conversation.log());
        }};
    }
    refused!(in_place, "in place");
    refused!(awaiting, "awaiting");
}

/// The turn's error when `$hook` panics: it must name the hook and the event, and leave the
/// log consistent.
macro_rules! assert_named {
    ($event:ident, $module:ident::$hook:ident) => {{
        let agent = Agent::builder(model()).tool(Weather::default()).hook($module::$hook).build();
        let mut conversation = Conversation::new();
        let error = agent.run(&mut conversation, "weather?").await.unwrap_err();
        let message = if stringify!($hook) == "in_place" { "in place" } else { "awaiting" };
        let expected = Error::HookPanicked {
            event: EventKind::$event,
            hook: stringify!($hook),
            message: message.into(),
        };
        assert_eq!(error, expected);
        assert_log_consistent(conversation.log());
    }};
}

#[tokio::test]
async fn a_panic_in_either_kind_of_hook_at_any_event_is_named() {
    macro_rules! at_every_event {
        ($($event:ident: $module:ident;)*) => {$(
            assert_named!($event, $module::in_place);
            assert_named!($event, $module::awaiting);
        )*};
    }
    // (A `before_tool` hook's panic refuses the call instead, below.)
    at_every_event! {
        Pre: pre;
        BeforeModel: before_model;
        AfterModel: after_model;
        AfterTool: after_tool;
        ToolError: tool_error;
        BeforeFinal: before_final;
        Post: post;
    }
}
