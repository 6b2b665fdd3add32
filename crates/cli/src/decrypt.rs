//! `akledger show ID --decrypt`: an admitted sidecar message, control, or observation grant
//! or revoke with its plaintext opened by the keyring's sidecar key (PROFILE §7, §14.4) —
//! the binding and body of a message, the action and basis of a control, the observer,
//! skill and filter of a grant. Only on request: `show` never decrypts by default.

use akledger::canonical::Object;
use akledger::exchange::classify::decrypt;
use akledger::exchange::plaintext::{ControlPlaintext, MessagePlaintext};
use akledger::exchange::{Action, Role};
use akledger::{Body, EncryptedEnvelope, Event, Json, SidecarId};

use super::output::{json_text, print_json, print_text_lines, typed, CliError};

/// Prints `event` with its plaintext (text or `{"event_id","kind","epoch","plaintext"}`).
pub fn show(event: &Event, keyring: &akledger::Keyring, json: bool) -> Result<(), CliError> {
    let id = event.id();
    let (sidecar, encrypted): (SidecarId, &EncryptedEnvelope) = match event.body() {
        Body::SidecarMessage { encrypted }
        | Body::ExchangeControl { encrypted, .. }
        | Body::ObservationGrant { encrypted }
        | Body::ObservationRevoke { encrypted } => {
            let sidecar = event.scope().sidecar_id().ok_or_else(|| {
                CliError::Usage(format!("{id}: an encrypted event outside a sidecar"))
            })?;
            (sidecar, encrypted)
        }
        _ => {
            return Err(CliError::Usage(format!(
                "{id}: a {} event carries no encrypted plaintext; --decrypt applies to sidecar messages, exchange controls and observation grants and revokes",
                event.kind()
            )))
        }
    };
    let epoch = encrypted.epoch;
    if keyring.sidecar_key(&sidecar, epoch).is_none() {
        return Err(CliError::Usage(format!(
            "{id}: cannot decrypt: the keyring has no key for {sidecar} epoch {epoch}; pass --keyring FILE (default DIR/keyring.json) or add it with `akledger keys add --sidecar {sidecar} --epoch {epoch} --key-file FILE`"
        )));
    }
    let bytes = decrypt(&sidecar, event, keyring, encrypted).map_err(|_| {
        CliError::Usage(format!(
            "{id}: does not decrypt with the keyring's key for {sidecar} epoch {epoch} (wrong key, or the ciphertext was altered)"
        ))
    })?;
    let read = read_plaintext(event.body(), &bytes);
    if json {
        let mut obj = Object::new()
            .with("event_id", id.to_string().into())
            .with("kind", event.kind().into())
            .with("epoch", Json::Int(i64::try_from(epoch).unwrap_or(i64::MAX)))
            .with("content_type", encrypted.content_type.as_str().into());
        let _ = match read {
            Ok((plaintext, _)) => obj.insert("plaintext", plaintext),
            Err(raw) => obj.insert("plaintext_invalid", raw.into()),
        };
        print_json(&typed("akledger.show.decrypted", obj))?;
        return Ok(());
    }
    let mut lines = vec![
        format!("event        {id}"),
        format!("kind         {}", event.kind()),
        format!("epoch        {epoch} ({})", encrypted.content_type),
    ];
    match read {
        Ok((plaintext, summary)) => {
            lines.extend(summary);
            lines.push(format!("plaintext    {}", json_text(&plaintext)));
        }
        Err(raw) => lines.push(format!(
            "plaintext    (not a valid plaintext of its kind) {raw}"
        )),
    }
    print_text_lines(lines)
}

/// The plaintext as JSON and the summary lines, or the raw text when it does not read.
fn read_plaintext(body: &Body, bytes: &[u8]) -> Result<(Json, Vec<String>), String> {
    let raw = || String::from_utf8_lossy(bytes).into_owned();
    let observation = |bytes: &[u8]| {
        akledger::canonical::parse_value(bytes)
            .ok()
            .filter(|v| v.as_object().is_some())
    };
    match body {
        Body::ObservationGrant { .. } => {
            let value = observation(bytes).ok_or_else(raw)?;
            let g = akledger::actors::Grant::from_json(&value).map_err(|_| raw())?;
            let lines = vec![
                format!("observer     {}", g.observer),
                format!("skill        {}/{}", g.subject, g.action),
                format!("filter       {}", json_text(&g.filter.to_json())),
            ];
            Ok((value, lines))
        }
        Body::ObservationRevoke { .. } => {
            let value = observation(bytes).ok_or_else(raw)?;
            let r = akledger::actors::Revoke::from_json(&value).map_err(|_| raw())?;
            Ok((value, vec![format!("revokes      {}", r.grant_event_id)]))
        }
        Body::ExchangeControl { .. } => {
            let p = ControlPlaintext::parse(bytes).map_err(|_| raw())?;
            let action = match &p.action {
                Action::Terminal { kind, .. } => kind.action().to_string(),
                Action::Reassign { expected, new } => {
                    format!("reassign_coordinator {expected} -> {new}")
                }
            };
            let basis: Vec<String> = p.basis_event_ids.iter().map(ToString::to_string).collect();
            let mut lines = vec![
                format!("exchange     {}", p.exchange_id),
                format!("request      {}", p.request_event_id),
                format!("action       {action}"),
                format!("basis        {}", basis.join(" ")),
            ];
            if let Action::Terminal {
                response_event_ids, ..
            } = &p.action
            {
                let ids: Vec<String> = response_event_ids.iter().map(ToString::to_string).collect();
                lines.push(format!("responses    {}", ids.join(" ")));
            }
            Ok((p.to_json(), lines))
        }
        _ => {
            let p = MessagePlaintext::parse(bytes).map_err(|_| raw())?;
            let mut lines = Vec::new();
            match &p.binding {
                None => lines.push("binding      none (a plain message)".to_string()),
                Some(b) => {
                    let role = match &b.role {
                        Role::Request(_) => "request".to_string(),
                        Role::Response {
                            request_event_id,
                            completes,
                        } => format!(
                            "response to {request_event_id}{}",
                            if completes.is_some() {
                                " (completes)"
                            } else {
                                ""
                            }
                        ),
                        Role::Internal { request_event_id } => {
                            format!("internal, on {request_event_id}")
                        }
                    };
                    lines.push(format!("binding      {} {role}", b.exchange_id));
                }
            }
            lines.push(format!("body         {}", json_text(&p.body)));
            Ok((p.to_json(), lines))
        }
    }
}
