//! A typed answer: the agent reads an invoice out of an email's text into an `Invoice`, calling
//! a currency-lookup tool on the way to give the total in euros. Its first answer leaves a
//! field out; it is sent back with why, and the second reads. A `before_final` hook on the
//! typed `Invoice` writes its currency code in capitals, and a validator then checks that the
//! converted total is the original times the rate.

use agentix::prelude::*;
use agentix::{Config, message::Role};

use crate::trace;

/// An invoice, as the agent answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(crate = "agentix::serde")]
#[schemars(crate = "agentix::schemars")]
pub struct Invoice {
    /// Who sent it.
    pub vendor: String,
    /// Its number.
    pub number: String,
    /// The total as written, in `currency`.
    pub total: f64,
    /// The currency it is written in (ISO 4217).
    pub currency: String,
    /// The total in euros.
    pub total_eur: f64,
    /// When it is due (YYYY-MM-DD), if it says.
    pub due: Option<String>,
}

/// What one unit of a currency is worth in euros.
#[tool]
pub async fn euro_rate(
    /// The currency's ISO 4217 code.
    currency: String,
) -> Result<f64, String> {
    match currency.as_str() {
        "EUR" => Ok(1.0),
        "NOK" => Ok(0.085),
        "USD" => Ok(0.92),
        other => Err(format!("no rate for {other}")),
    }
}

/// The converted total is the original times the rate, to the cent.
pub fn converted(invoice: &Invoice) -> Result<(), String> {
    let rate = match invoice.currency.as_str() {
        "NOK" => 0.085,
        "USD" => 0.92,
        _ => 1.0,
    };
    let expected = (invoice.total * rate * 100.0).round() / 100.0;
    if (invoice.total_eur - expected).abs() > 0.01 {
        return Err(format!(
            "total_eur is {}, but {} {} is {expected} EUR",
            invoice.total_eur, invoice.total, invoice.currency
        ));
    }
    Ok(())
}

/// Currency codes in capitals, as ISO 4217 writes them: a hook on the typed answer, before the
/// validator reads it.
#[hook(before_final)]
pub async fn currency_in_capitals(invoice: &mut Invoice) {
    invoice.currency = invoice.currency.to_ascii_uppercase();
}

/// The email the invoice is read from.
pub const EMAIL: &str = "Hi! Invoice 2024-117 from Fjord Ferries AS: 1 250 NOK for the crossing, \
                         due 2024-12-31. Thanks!";

/// Runs the example: what it prints goes to `out`; the invoice, and the model's requests, for
/// the tests.
pub async fn run(
    out: &(dyn Fn(&str) + Sync),
) -> (Result<Invoice, agentix::Error>, Vec<ModelRequest>) {
    let model = ScriptedModel::new()
        .tool_call("euro_rate", serde_json::json!({ "currency": "NOK" }))
        // The first answer forgets the invoice's number: it does not read as an `Invoice`.
        .text(r#"{"vendor": "Fjord Ferries AS", "total": 1250, "currency": "NOK", "total_eur": 106.25, "due": "2024-12-31"}"#)
        // The second reads, with the currency in small letters: the hook writes it in capitals.
        .text(r#"{"vendor": "Fjord Ferries AS", "number": "2024-117", "total": 1250, "currency": "nok", "total_eur": 106.25, "due": "2024-12-31"}"#);
    let agent = Agent::builder(&model)
        .tool(euro_rate)
        .output::<Invoice>()
        .hook(currency_in_capitals)
        .validate(converted)
        .build();
    let mut conversation =
        Conversation::with_config(Config { max_retries: 2, ..Config::default() });
    let invoice = agent.turn(&mut conversation, EMAIL).answer().await;
    let requests = model.requests();
    if let Some(schema) = &requests[0].params.output {
        out(&format!("the answer's schema, in every request: {} {}", schema.name, schema.schema));
    }
    for request in &requests[1..] {
        if let Some(said) = request.messages.last().filter(|message| message.role == Role::User) {
            out(&format!("sent back to the model: {}", said.text()));
        }
    }
    trace::log(out, &conversation);
    match &invoice {
        Ok(invoice) => out(&format!("invoice: {invoice:#?}")),
        Err(error) => out(&format!("error: {error}")),
    }
    (invoice, requests)
}
