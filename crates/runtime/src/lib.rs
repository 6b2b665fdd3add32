//! The sidecar runtime of seed 002 (IO shell): envelopes in, events out.
//!
//! Agents talk by [`Envelope`]s; [`Connection`]s bring them in and take them out (the
//! file-based [`StubConnection`] in the AEA line format, AEA's TCP server
//! [`TcpConnection`], and the [`LinkConnection`] between two sidecars); the [`Runtime`] is
//! the main loop over a [`Multiplexer`] of named connections, with the ledger as its InBox
//! and OutBox (each envelope an encrypted `ak.message.create` event of the sidecar,
//! appended before it is handled or written); [`skills`] hold the handlers (per protocol:
//! [`EchoHandler`] for the default protocol; the error skill answers what nobody handles),
//! behaviours (one-shot, cyclic, state machines) and models of the agent's logic; the
//! exchange [`bridge`] turns envelopes into exchange requests and responses; and the
//! decision maker's pure [`policy`] proposes the controller's controls.
//!
//! - [`envelope`]: `Envelope`, `ProtocolId`, the `Connection` trait.
//! - [`stub_format`], [`escapes`]: the stub line format (pure); [`stub`]: the stub
//!   connection over two files.
//! - [`tcp`]: AEA's TCP connection, the server side; [`link`]: two sidecars over TCP,
//!   authenticated and acknowledged, its frames and handshake in [`link_protocol`] (pure).
//! - [`protobuf`], [`default_protocol`]: the default protocol's messages (pure).
//! - [`handlers`]: the handler trait, echo, the error skill; [`dialogue`]: AEA 1.x
//!   dialogues (pure); [`base85`]: how the error skill quotes (pure).
//! - [`skills`]: skills, behaviours, models, the built-in kinds and their catalog.
//! - [`records`]: the runtime's event bodies (pure); [`progress`]: its progress marker.
//! - [`bridge`]: the exchange bridge; [`policy`]: the decision maker (pure).
//! - [`config`]: identities, address book, policy; [`config_file`]: the configuration
//!   file with its connections, routes and skills; [`bootstrap()`]: a sidecar from
//!   nothing.
//! - [`multiplexer`]: the `Runtime` (main loop, multiplexer, recovery).
//! - [`limits`]: every bound of the runtime.
#![deny(missing_docs)]

pub mod base85;
pub mod bridge;
pub mod config;
pub mod config_file;
pub mod default_protocol;
pub mod dialogue;
pub mod envelope;
pub mod escapes;
pub mod handlers;
pub mod limits;
pub mod link;
pub mod link_protocol;
pub mod multiplexer;
pub mod policy;
pub mod progress;
pub mod protobuf;
pub mod records;
pub mod skills;
mod socket;
pub mod stub;
pub mod stub_format;
pub mod tcp;

pub use bridge::EXCHANGE_PROTOCOL_ID;
pub use config::{Identity, RuntimeConfig};
pub use default_protocol::{DefaultMessage, ErrorCode, Performative, DEFAULT_PROTOCOL_ID};
pub use envelope::{Connection, Envelope, FileIdentity, InputCursor, ProtocolId, Received};
pub use handlers::{EchoHandler, Handler, Inbound, Refusal};
pub use link::LinkConnection;
pub use multiplexer::{Multiplexer, Runtime, Stage, StepReport};
pub use policy::{Decision, OpenExchange, Policy};
pub use stub::{OutputMode, StubConnection};
pub use tcp::TcpConnection;

use akledger::ed25519_dalek::SigningKey;
use rand_core::OsRng;

use akledger::did::ActorId;
use akledger::encrypted::SidecarKey;
use akledger::error::Error;
use akledger::exchange::{create_private_sidecar, create_realm};
use akledger::ledger::{Appended, Ledger};
use akledger::time::Timestamp;

/// A sidecar from nothing, with `controller_key` as its controller: a realm, the sidecar
/// with the controller's private strand attached (PROFILE §6), and a fresh sidecar key at
/// epoch 1 (saved to the ledger's keyring file when it has one). Returns the runtime
/// configuration for it (controller address `controller`, no agents).
pub fn bootstrap(ledger: &Ledger, controller_key: SigningKey) -> Result<RuntimeConfig, Error> {
    let actor = ActorId::service_for_key(&controller_key.verifying_key());
    let realm = create_realm(&controller_key, actor.clone(), Timestamp::now())?;
    let at = Timestamp::now_after([realm.created_at()]);
    let private = create_private_sidecar(&controller_key, actor, realm.id().retype(), None, at)?;
    let mut bytes: Vec<&[u8]> = vec![realm.bytes()];
    bytes.extend(private.events().map(|e| e.bytes()));
    for outcome in ledger.append_batch(&bytes)? {
        if let Appended::Rejected { rejection, .. } = outcome {
            return Err(Error::Rejected(rejection));
        }
    }
    let sidecar = private.info.sidecar_id;
    ledger.add_sidecar_key(sidecar, 1, SidecarKey::generate(&mut OsRng))?;
    let controller = Identity {
        address: "controller".to_string(),
        key: controller_key,
    };
    Ok(RuntimeConfig::new(sidecar, controller))
}
