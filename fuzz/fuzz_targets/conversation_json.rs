//! A stored conversation, as arbitrary bytes: reading it never panics; what reads is a valid log
//! (the reading checks it) that writes back and reads again as itself.

#![no_main]

use agentix::Conversation;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(conversation) = serde_json::from_slice::<Conversation>(data) else {
        return;
    };
    conversation.validate().expect("a conversation that reads is valid");
    let written = serde_json::to_vec(&conversation).expect("a conversation writes");
    let again: Conversation = serde_json::from_slice(&written).expect("what was written reads");
    assert_eq!(again.log(), conversation.log());
    assert_eq!(again.config(), conversation.config());
    assert_eq!(again.turns(), conversation.turns());
});
