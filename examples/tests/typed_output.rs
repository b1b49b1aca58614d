//! The typed_output example: the invoice reads as an `Invoice` after one answer sent back, the
//! currency tool having run on the way and a hook on the typed answer having written its currency
//! in capitals.

use examples::typed_output::{Invoice, run};

#[tokio::test]
async fn the_invoice_reads_after_one_answer_is_sent_back() {
    let (invoice, requests) = run(&|_| {}).await;
    assert_eq!(
        invoice.unwrap(),
        Invoice {
            vendor: "Fjord Ferries AS".into(),
            number: "2024-117".into(),
            total: 1250.0,
            currency: "NOK".into(),
            total_eur: 106.25,
            due: Some("2024-12-31".into()),
        }
    );
    // The rate tool, the first answer, then the answer sent back with why.
    assert_eq!(requests.len(), 3);
    let told = requests[2].messages.last().unwrap().text().into_owned();
    assert!(told.contains("missing field `number`"), "{told}");
    assert!(requests.iter().all(|request| request.params.output.is_some()));
}
