//! The quickstart reports every one of the eleven events as it fires, in lifecycle order, with
//! the decision of the hook on it.

use std::sync::Mutex;

#[tokio::test]
async fn the_quickstart_fires_all_eleven_events() {
    let lines = Mutex::new(Vec::<String>::new());
    let reply =
        examples::quickstart::run(&|line| lines.lock().unwrap().push(line.to_owned())).await;
    assert_eq!(reply.unwrap().joined_text(), "It is clear in Oslo, 21°C.");

    let lines = lines.into_inner().unwrap();
    // Event lines read `[turn 1, step 0] before_model`.
    let fired: Vec<&str> = lines
        .iter()
        .filter(|line| line.starts_with("[turn 1, step "))
        .filter_map(|line| line.split("] ").nth(1))
        .collect();
    for event in agentix::event::EventKind::TURN {
        assert!(fired.contains(&event.name()), "{} never fired: {fired:?}", event.name());
    }
    assert_eq!(fired.first(), Some(&"pre"));
    assert_eq!(fired.last(), Some(&"post"));
    // And at each event, its hook ran: decision lines read `    pre hook `user_profile`: …`.
    for event in agentix::event::EventKind::TURN {
        let decided = format!("    {} hook `", event.name());
        assert!(
            lines.iter().any(|line| line.starts_with(&decided)),
            "no hook decided at {}",
            event.name()
        );
    }
    assert!(lines.iter().any(|line| line == "    tool_error hook `explain_arguments`: continue"));
    assert!(lines.iter().any(|line| line.contains("Call it as {\"city\": \"<name>\"}")));
}
