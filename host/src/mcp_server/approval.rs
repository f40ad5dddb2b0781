//! Approval over MCP: with `--ask`, a call the policy would deny is put to the person
//! behind the client, through `elicitation/create`, when the client declared that it can ask;
//! otherwise the run pauses and `resume_run {id, approve}` continues it.

use std::time::Duration;

use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::{ElicitationMode, Peer, RoleServer};
use serde_json::Value;

use crate::permissions::{Asker, Question};
use crate::primitives::truncate_at;

/// How `forge-host mcp --ask` puts a call to a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AskVia {
    /// Through the client (`elicitation/create`) when it declared the capability; otherwise
    /// the run pauses.
    Client,
    /// The run always pauses at the call, for `resume_run`.
    Pause,
}

/// Longest input quoted in the question's message, in bytes (the whole input is in `_meta`).
const MAX_QUOTED_INPUT_BYTES: usize = 2000;

/// The field of the form the person answers.
const APPROVE_FIELD: &str = "approve";

/// An asker that puts questions to the client behind `peer`, when it declared form
/// elicitation; `None` when it did not (the run then pauses instead). `within` bounds how long
/// one question waits for its answer; no answer is a no.
pub fn client_asker(peer: &Peer<RoleServer>, within: Duration) -> Option<Asker> {
    if !peer
        .supported_elicitation_modes()
        .contains(&ElicitationMode::Form)
    {
        return None;
    }
    let peer = peer.clone();
    // The asker is called off the async threads (it may block), so it drives the request on
    // the server's runtime from there.
    let runtime = tokio::runtime::Handle::current();
    Some(std::sync::Arc::new(move |question: &Question| {
        let params = question_params(question);
        let answer = runtime.block_on(peer.create_elicitation_with_timeout(params, Some(within)));
        match answer {
            Ok(result) => {
                result.action == ElicitationAction::Accept && approved(result.content.as_ref())
            }
            Err(_) => false,
        }
    }))
}

/// Whether an accepted form says yes: `{"approve": true}`.
fn approved(content: Option<&Value>) -> bool {
    content
        .and_then(|content| content.get(APPROVE_FIELD))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// The form that asks about one call: its tool, effect, input and why it needs approval.
fn question_params(question: &Question) -> ElicitRequestParams {
    let input = question.input.to_string();
    let shown = if input.len() > MAX_QUOTED_INPUT_BYTES {
        format!("{} [...]", truncate_at(&input, MAX_QUOTED_INPUT_BYTES))
    } else {
        input
    };
    let message = format!(
        "A script calls `{}` ({} effect) with {shown}\n{}\nAllow it?",
        question.tool,
        question.effect.as_str(),
        question.reason
    );
    let schema = ElicitationSchema::builder()
        .required_bool_with(APPROVE_FIELD, |field| {
            field
                .title("Allow this call")
                .description("true runs the call; false fails it with TOOL_DENIED")
        })
        .build()
        .unwrap_or_else(|_| ElicitationSchema::new(Default::default()));
    let mut meta = rmcp::model::RequestMetaObject::new();
    meta.insert(
        "forge-host/call".into(),
        serde_json::json!({
            "tool": question.tool,
            "effect": question.effect.as_str(),
            "input": question.input,
            "reason": question.reason,
        }),
    );
    ElicitRequestParams::FormElicitationParams {
        meta: Some(meta),
        message,
        requested_schema: schema,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permissions::Effect;
    use serde_json::json;

    #[test]
    fn only_an_accepted_form_with_approve_true_says_yes() {
        assert!(approved(Some(&json!({"approve": true}))));
        assert!(!approved(Some(&json!({"approve": false}))));
        assert!(!approved(Some(&json!({"approve": "yes"}))));
        assert!(!approved(Some(&json!({}))));
        assert!(!approved(None));
    }

    #[test]
    fn the_question_names_the_tool_effect_input_and_reason() {
        let question = Question {
            tool: "workspace.write".into(),
            effect: Effect::Write,
            reason: "`write` tools need --allow-write".into(),
            input: json!({"path": "a.txt", "content": "x".repeat(5000)}),
        };
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            meta,
        } = question_params(&question)
        else {
            panic!("a form");
        };
        assert!(
            message.contains("`workspace.write` (write effect)"),
            "{message}"
        );
        assert!(message.contains("--allow-write") && message.contains("[...]"));
        assert!(message.len() < 2500, "a long input is cut in the message");
        let schema = serde_json::to_value(&requested_schema).expect("schema");
        assert_eq!(schema["properties"]["approve"]["type"], "boolean");
        assert_eq!(schema["required"], json!(["approve"]));
        let call = &meta.expect("meta")["forge-host/call"];
        assert_eq!(
            call["input"]["path"], "a.txt",
            "the whole input rides in _meta"
        );
    }
}
