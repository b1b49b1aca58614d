//! One turn with tool calls over the scripted model, with a hook on each of the eleven events,
//! printing a trace of each event as it fires and what each hook decided.
//!
//! Run it with `cargo run -p examples --example quickstart`.

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let reply = examples::quickstart::run(&|line| println!("{line}")).await;
    if reply.is_err() {
        std::process::exit(1);
    }
}
