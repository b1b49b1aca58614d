//! The cache_stop example: the second time, the cache answers and the model is not called.

#[tokio::test]
async fn a_question_asked_twice_calls_the_model_once() {
    let (first, second, calls) = examples::cache_stop::run(&|_| {}).await;
    let first = first.expect("the model answers");
    assert_eq!(second.expect("the cache answers"), first);
    assert_eq!(calls, 1);
}
