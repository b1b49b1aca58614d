//! The foundation's hook-order and verdict scenarios ([`tests::scenarios`]), each run on the
//! direct and the streamed path: both paths leave the same log, send the same requests, reach
//! the same outcome, and report the same hook decisions in the same order.

use tests::Path;
use tests::scenarios::{self, SAID};

#[tokio::test]
async fn every_scenario_runs_the_same_on_both_paths() {
    for scenario in scenarios::all() {
        let model = scenarios::scripted_model();
        let direct = scenarios::run(Path::Direct, &model, scenario.clone()).await;
        assert_eq!(
            direct.requests,
            model.requests(),
            "{scenario:?}: the last probe passes on what the model gets"
        );
        let streamed =
            scenarios::run(Path::Streamed, scenarios::scripted_model(), scenario.clone()).await;
        assert_eq!(streamed.ran.outcome, direct.ran.outcome, "{scenario:?}");
        assert_eq!(streamed.ran.hooks, direct.ran.hooks, "{scenario:?}: hook decisions differ");
        assert_eq!(streamed.calls, direct.calls, "{scenario:?}: hooks were called differently");
        assert_eq!(streamed.log, direct.log, "{scenario:?}: the logs differ");
        assert_eq!(
            streamed.requests, direct.requests,
            "{scenario:?}: the model saw different requests"
        );
        assert!(
            !direct.ran.hooks.is_empty(),
            "{scenario:?}: nothing was traced; the comparison proves nothing"
        );
        // Whatever the model said reached the stream: every response's text, in order.
        assert_eq!(direct.ran.streamed, "");
        // The first response only calls tools; each later one is one of `SAID`.
        let texts = direct.requests.len().saturating_sub(1);
        assert_eq!(
            streamed.ran.streamed,
            SAID[..texts].concat(),
            "{scenario:?}: the stream lost or added text"
        );
    }
}
