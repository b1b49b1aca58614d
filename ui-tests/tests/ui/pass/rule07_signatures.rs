//! Rule 7: a free, non-generic `async fn`, with any visibility and attributes; the function
//! stays callable as `NAME::call`.

use agentix::event::AfterModel;
use agentix::{AssistantMessage, Verdict, hook};

mod hooks {
    use agentix::{AssistantMessage, hook};

    /// Visible outside its module.
    #[hook(after_model)]
    pub async fn public(_message: &AssistantMessage) {}

    #[hook(after_model)]
    pub(crate) async fn crate_visible(_message: &AssistantMessage) {}
}

/// Documented, with a lint attribute kept on the function.
#[hook(after_model)]
#[allow(clippy::needless_return)]
async fn plain(message: &AssistantMessage) -> Verdict<AfterModel> {
    if message.calls_tools() {
        return Verdict::Continue;
    }
    return Verdict::Continue;
}

fn main() {
    let _ = (hooks::public, hooks::crate_visible, plain);
    let message = AssistantMessage::text("hi");
    let verdict = futures::executor::block_on(plain::call(&message));
    assert!(verdict.is_continue());
}
