//! The connections a runtime multiplexes (seed 002: "the Multiplexer is responsible for
//! maintaining potentially multiple connections"), each under a name, and the routes that
//! send envelopes for an address through one of them.

use std::collections::BTreeMap;

use crate::envelope::Connection;
use akledger::error::Error;

/// Longest connection name, in bytes (names are written into every inbox and outbox record).
const MAX_NAME_BYTES: usize = 64;

/// One named connection.
struct Slot {
    name: String,
    connection: Box<dyn Connection>,
}

/// Named connections and the routes between them, what a [`Runtime`](super::Runtime)
/// polls.
///
/// **Routing.** An envelope the runtime sends goes through the connection its address is
/// routed to ([`Multiplexer::route`]); an answer without a route goes back through the
/// connection its cause came in by; anything else through the first connection added (the
/// default). An envelope that comes in by one connection for an address routed to another
/// is relayed there (made an inbox event, then an outbox event of that connection) instead
/// of being handled: two sidecars joined by a [`LinkConnection`](crate::LinkConnection)
/// carry their agents' envelopes to each other that way.
///
/// # Examples
///
/// ```
/// use akledger_runtime::{Multiplexer, OutputMode, StubConnection, TcpConnection};
///
/// let dir = tempfile::tempdir()?;
/// let stub = StubConnection::open(&dir.path().join("in"), &dir.path().join("out"))?;
/// let mut connections = Multiplexer::new();
/// connections.add("stub", stub)?;
/// connections.add("tcp", TcpConnection::listen("127.0.0.1:0".parse()?)?)?;
/// connections.route("remote_agent", "tcp")?;
/// assert_eq!(connections.names().collect::<Vec<_>>(), ["stub", "tcp"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Default)]
pub struct Multiplexer {
    slots: Vec<Slot>,
    routes: BTreeMap<String, usize>,
}

impl std::fmt::Debug for Multiplexer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self
            .slots
            .iter()
            .map(|s| format!("{} ({})", s.name, s.connection.kind()))
            .collect();
        f.debug_struct("Multiplexer")
            .field("connections", &names)
            .field("routes", &self.routes.len())
            .finish()
    }
}

/// `[A-Za-z0-9_-]{1,64}`.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_BYTES
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl Multiplexer {
    /// No connections yet.
    pub fn new() -> Multiplexer {
        Multiplexer::default()
    }

    /// Adds `connection` under `name` (`[A-Za-z0-9_-]{1,64}`, unique); the first one added
    /// is the default.
    pub fn add(
        &mut self,
        name: &str,
        connection: impl Connection + 'static,
    ) -> Result<&mut Self, Error> {
        self.add_boxed(name, Box::new(connection))
    }

    /// [`Multiplexer::add`] for a connection already boxed.
    pub fn add_boxed(
        &mut self,
        name: &str,
        connection: Box<dyn Connection>,
    ) -> Result<&mut Self, Error> {
        if !valid_name(name) {
            return Err(Error::Misuse(format!(
                "connection name {name:?}: expected 1 to {MAX_NAME_BYTES} of A-Z a-z 0-9 _ -"
            )));
        }
        if self.index(name).is_some() {
            return Err(Error::Misuse(format!("two connections named {name:?}")));
        }
        self.slots.push(Slot {
            name: name.to_string(),
            connection,
        });
        Ok(self)
    }

    /// Sends what is addressed to `address` through the connection named `connection`.
    pub fn route(&mut self, address: &str, connection: &str) -> Result<&mut Self, Error> {
        let slot = self.index(connection).ok_or_else(|| {
            Error::Misuse(format!(
                "route {address:?}: no connection named {connection:?}"
            ))
        })?;
        self.routes.insert(address.to_string(), slot);
        Ok(self)
    }

    /// The connections' names, the default first.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.slots.iter().map(|s| s.name.as_str())
    }

    /// How many connections there are.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The connection named `name`.
    pub fn get(&self, name: &str) -> Option<&dyn Connection> {
        self.slots
            .iter()
            .find(|s| s.name == name)
            .map(|s| &*s.connection)
    }

    /// The position of the connection named `name`.
    pub(crate) fn index(&self, name: &str) -> Option<usize> {
        self.slots.iter().position(|s| s.name == name)
    }

    /// The name of the connection at `slot`.
    pub(crate) fn name(&self, slot: usize) -> &str {
        self.slots.get(slot).map_or("", |s| s.name.as_str())
    }

    /// The connection at `slot` (the default when out of range; there is always one once
    /// a runtime holds the multiplexer).
    pub(crate) fn at(&mut self, slot: usize) -> Option<&mut (dyn Connection + 'static)> {
        self.slots.get_mut(slot).map(|s| &mut *s.connection)
    }

    /// The connection routed to `address`, if a route names one.
    pub(crate) fn routed(&self, address: &str) -> Option<usize> {
        self.routes.get(address).copied()
    }

    /// Where an envelope to `address` goes, its cause having come in by `origin`.
    pub(crate) fn route_for(&self, address: &str, origin: Option<usize>) -> usize {
        self.routed(address).or(origin).unwrap_or(0)
    }
}

impl<C: Connection + 'static> From<C> for Multiplexer {
    /// One connection, named by its kind.
    fn from(connection: C) -> Multiplexer {
        Multiplexer {
            slots: vec![Slot {
                name: connection.kind().to_string(),
                connection: Box::new(connection),
            }],
            routes: BTreeMap::new(),
        }
    }
}
