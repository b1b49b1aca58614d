//! Who may do what to a conversation: its owner, the roles an operator grants more, and the
//! role approvals take.

use crate::Identity;

/// What each caller may do. A conversation belongs to the subject that created it: only its
/// owner reads it, sends to it and answers its approvals — unless a role says more. Another
/// subject's conversation answers as if it did not exist (`404`), so ids cannot be probed;
/// a caller who may read a conversation but not do what it asks gets `403`.
///
/// Approving, rejecting or editing a waiting call is a right of its own: the `approver` role
/// unless told otherwise ([`approvals_need`](Access::approvals_need),
/// [`owners_approve`](Access::owners_approve)). Whoever decides is recorded in the log.
///
/// ```
/// use agentix_server::Access;
///
/// // A support desk reads every conversation; operators act on any, approvals included.
/// let access = Access::new().read_all("support").answer_all("operator").approvals_need("approver");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    read_all: Option<String>,
    answer_all: Option<String>,
    approver: Option<String>,
}

impl Default for Access {
    fn default() -> Self {
        Access { read_all: None, answer_all: None, approver: Some("approver".to_owned()) }
    }
}

impl Access {
    /// Owners only; approvals need the `approver` role.
    pub fn new() -> Access {
        Access::default()
    }

    /// Callers with `role` read every conversation (and what waits in it), whoever owns it.
    pub fn read_all(mut self, role: impl Into<String>) -> Access {
        self.read_all = Some(role.into());
        self
    }

    /// Callers with `role` read, send to and answer the approvals of every conversation
    /// (approvals still need the approver role).
    pub fn answer_all(mut self, role: impl Into<String>) -> Access {
        self.answer_all = Some(role.into());
        self
    }

    /// Approving, rejecting or editing a waiting call needs `role`.
    pub fn approvals_need(mut self, role: impl Into<String>) -> Access {
        self.approver = Some(role.into());
        self
    }

    /// Whoever may act on a conversation answers its approvals too: no role of their own.
    pub fn owners_approve(mut self) -> Access {
        self.approver = None;
        self
    }

    fn has(identity: &Identity, role: &Option<String>) -> bool {
        role.as_deref().is_some_and(|role| identity.has_role(role))
    }

    /// Whether `identity` may read a conversation `owner` owns (`None`: nobody owns it).
    pub fn reads(&self, identity: &Identity, owner: Option<&str>) -> bool {
        self.acts(identity, owner) || Access::has(identity, &self.read_all)
    }

    /// Whether `identity` may send to a conversation `owner` owns, or answer its approvals
    /// (if it may approve at all: [`approves`](Access::approves)).
    pub fn acts(&self, identity: &Identity, owner: Option<&str>) -> bool {
        owner == Some(identity.subject.as_str()) || Access::has(identity, &self.answer_all)
    }

    /// Whether `identity` may approve, reject or edit waiting calls.
    pub fn approves(&self, identity: &Identity) -> bool {
        self.approver.as_deref().is_none_or(|role| identity.has_role(role))
    }

    /// The role approvals need, if any.
    pub fn approver_role(&self) -> Option<&str> {
        self.approver.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_act_roles_widen_and_approving_is_a_right_of_its_own() {
        let access = Access::new().read_all("support").answer_all("operator");
        let alice = Identity::new("alice");
        let support = Identity::new("sam").with_role("support");
        let operator = Identity::new("olga").with_roles(["operator", "approver"]);
        assert!(access.reads(&alice, Some("alice")) && access.acts(&alice, Some("alice")));
        assert!(!access.reads(&alice, Some("bob")) && !access.acts(&alice, Some("bob")));
        assert!(!access.reads(&alice, None), "nobody's conversation is no subject's");
        assert!(access.reads(&support, Some("bob")) && !access.acts(&support, Some("bob")));
        assert!(access.reads(&operator, None) && access.acts(&operator, Some("bob")));
        assert!(!access.approves(&alice) && access.approves(&operator));
        assert!(Access::new().owners_approve().approves(&alice));
        assert!(
            Access::new().approvals_need("desk").approves(&Identity::new("d").with_role("desk"))
        );
    }
}
