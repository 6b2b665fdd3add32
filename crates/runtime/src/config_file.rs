//! The runtime's configuration file (what `akledger sidecar run` reads from
//! `DIR/sidecar-runtime.json` or `--config`): identities, address book and policy
//! ([`RuntimeConfig`]), and the connections, routes and skills the runtime runs. Paths in
//! it are relative to the file.
//!
//! ```json
//! {"address": "sidecar", "sidecar_id": "ak:sidecar:…", "epoch": 1,
//!  "controller": {"address": "controller", "key_file": "controller.key"},
//!  "agents": [{"address": "agent_a", "key_file": "agent_a.key"}],
//!  "address_book": {"agent_c": "ak:did_core:key:…"},
//!  "timeout_secs": 3600, "timeout_code": "exchange_timeout",
//!  "connections": [
//!    {"name": "stub", "kind": "stub", "input_file": "in.txt", "output_file": "out.txt",
//!     "output_mode": "handoff"},
//!    {"name": "tcp", "kind": "tcp", "listen": "127.0.0.1:10000"},
//!    {"name": "east", "kind": "link", "connect": "10.0.0.2:7100",
//!     "peer": "ak:did_core:key:…", "key_file": "controller.key"}],
//!  "routes": {"agent_east": "east"},
//!  "skills": [{"name": "echo", "kind": "echo"},
//!             {"name": "reachable", "kind": "probe", "settings": {"to": "agent_a"}}]}
//! ```
//!
//! Every member but `sidecar_id` and `controller` may be left out. A link either `listen`s
//! or `connect`s; it proves it holds `key_file`'s key (the controller's when absent) and
//! accepts only `peer`'s. Skill kinds are those of the [`SkillCatalog`] the caller passes.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use akledger::canonical::{parse_value, Json, Object};
use akledger::did::DidCoreId;
use akledger::ed25519_dalek::{SigningKey, VerifyingKey};
use akledger::error::Error;
use akledger::id::SidecarId;
use akledger::key_file;

use crate::config::{Identity, RuntimeConfig};
use crate::limits::MAX_RUNTIME_CONFIG_BYTES;
use crate::link::LinkConnection;
use crate::multiplexer::Multiplexer;
use crate::policy::Policy;
use crate::skills::{Skill, SkillCatalog, SkillDeclaration};
use crate::stub::{OutputMode, StubConnection};
use crate::tcp::TcpConnection;

/// A connection a configuration declares.
#[derive(Clone, Debug)]
pub enum ConnectionKind {
    /// The stub connection over two files.
    Stub {
        /// The file envelopes arrive in.
        input_file: PathBuf,
        /// The file envelopes are written to.
        output_file: PathBuf,
        /// How the output is written.
        output_mode: OutputMode,
    },
    /// AEA's TCP connection, listening.
    Tcp {
        /// Where it listens.
        listen: SocketAddr,
    },
    /// A link to another sidecar.
    Link {
        /// Where it listens, or connects to.
        address: SocketAddr,
        /// True to listen, false to connect.
        listen: bool,
        /// The key this side proves it holds.
        key: Box<SigningKey>,
        /// The only key the other side may prove.
        peer: VerifyingKey,
    },
}

/// A named connection a configuration declares.
#[derive(Clone, Debug)]
pub struct ConnectionDeclaration {
    /// Its name (in records and routes).
    pub name: String,
    /// What it is.
    pub kind: ConnectionKind,
}

impl ConnectionDeclaration {
    /// Opens the connection.
    pub fn open(&self) -> Result<Box<dyn crate::Connection>, Error> {
        let io = |path: String| {
            move |source| Error::Io {
                path: PathBuf::from(path),
                source,
            }
        };
        Ok(match &self.kind {
            ConnectionKind::Stub {
                input_file,
                output_file,
                output_mode,
            } => Box::new(
                StubConnection::open_with(input_file, output_file, *output_mode)
                    .map_err(io(input_file.display().to_string()))?,
            ),
            ConnectionKind::Tcp { listen } => {
                Box::new(TcpConnection::listen(*listen).map_err(io(listen.to_string()))?)
            }
            ConnectionKind::Link {
                address,
                listen: true,
                key,
                peer,
            } => Box::new(
                LinkConnection::listen(*address, (**key).clone(), *peer)
                    .map_err(io(address.to_string()))?,
            ),
            ConnectionKind::Link {
                address, key, peer, ..
            } => Box::new(LinkConnection::connect(*address, (**key).clone(), *peer)),
        })
    }
}

/// A configuration file's content.
#[derive(Clone, Debug)]
pub struct ConfigFile {
    /// Identities, address book, policy.
    pub runtime: RuntimeConfig,
    /// The connections, the default first.
    pub connections: Vec<ConnectionDeclaration>,
    /// Addresses routed to a connection, by name.
    pub routes: BTreeMap<String, String>,
    /// The skills.
    pub skills: Vec<SkillDeclaration>,
    /// The file it was read from (named in the errors of what it declares).
    pub path: PathBuf,
}

/// A member of the file, read with the file's name in every error.
struct Reader<'a> {
    path: &'a Path,
}

impl Reader<'_> {
    fn bad(&self, why: impl std::fmt::Display) -> Error {
        Error::Misuse(format!("{}: {why}", self.path.display()))
    }

    fn text<'j>(&self, obj: &'j Object, key: &str) -> Result<&'j str, Error> {
        obj.get(key)
            .and_then(Json::as_str)
            .ok_or_else(|| self.bad(format!("{key} is missing or not a string")))
    }

    fn optional_text<'j>(&self, obj: &'j Object, key: &str) -> Result<Option<&'j str>, Error> {
        match obj.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_str()
                .map(Some)
                .ok_or_else(|| self.bad(format!("{key} is not a string"))),
        }
    }

    fn positive(&self, obj: &Object, key: &str) -> Result<Option<u64>, Error> {
        match self.natural(obj, key)? {
            Some(0) => Err(self.bad(format!("{key} is not a positive integer"))),
            n => Ok(n),
        }
    }

    fn natural(&self, obj: &Object, key: &str) -> Result<Option<u64>, Error> {
        match obj.get(key) {
            None => Ok(None),
            Some(&Json::Int(n)) if n >= 0 => Ok(Some(n.unsigned_abs())),
            Some(_) => Err(self.bad(format!("{key} is not a non-negative integer"))),
        }
    }

    fn object<'j>(&self, v: &'j Json, what: &str) -> Result<&'j Object, Error> {
        v.as_object()
            .ok_or_else(|| self.bad(format!("{what} is not an object")))
    }

    fn list<'j>(&self, obj: &'j Object, key: &str) -> Result<&'j [Json], Error> {
        match obj.get(key) {
            None => Ok(&[]),
            Some(v) => v
                .as_array()
                .ok_or_else(|| self.bad(format!("{key} is not an array"))),
        }
    }

    fn file(&self, relative: &str) -> PathBuf {
        self.path.parent().unwrap_or(Path::new(".")).join(relative)
    }

    fn key(&self, relative: &str) -> Result<SigningKey, Error> {
        key_file::read(&self.file(relative))
    }

    fn identity(&self, v: &Json, what: &str) -> Result<Identity, Error> {
        let obj = self.object(v, what)?;
        Ok(Identity {
            address: self.text(obj, "address")?.to_string(),
            key: self.key(self.text(obj, "key_file")?)?,
        })
    }

    fn socket(&self, text: &str, what: &str) -> Result<SocketAddr, Error> {
        text.parse()
            .map_err(|_| self.bad(format!("{what} {text:?} is not an address and port")))
    }

    fn connection(
        &self,
        v: &Json,
        controller: &SigningKey,
    ) -> Result<ConnectionDeclaration, Error> {
        let obj = self.object(v, "a connection")?;
        let name = self.text(obj, "name")?.to_string();
        let kind = match self.text(obj, "kind")? {
            "stub" => ConnectionKind::Stub {
                input_file: self.file(self.text(obj, "input_file")?),
                output_file: self.file(self.text(obj, "output_file")?),
                output_mode: match self.optional_text(obj, "output_mode")? {
                    None | Some("handoff") => OutputMode::Handoff,
                    Some("append") => OutputMode::Append,
                    Some(other) => {
                        return Err(self.bad(format!(
                            "connection {name}: output_mode {other:?} is neither handoff nor append"
                        )))
                    }
                },
            },
            "tcp" => ConnectionKind::Tcp {
                listen: self.socket(self.text(obj, "listen")?, "listen")?,
            },
            "link" => {
                let (address, listen) = match (
                    self.optional_text(obj, "listen")?,
                    self.optional_text(obj, "connect")?,
                ) {
                    (Some(a), None) => (self.socket(a, "listen")?, true),
                    (None, Some(a)) => (self.socket(a, "connect")?, false),
                    _ => {
                        return Err(self.bad(format!(
                            "connection {name}: a link has either listen or connect"
                        )))
                    }
                };
                let peer = self.text(obj, "peer")?;
                let peer = DidCoreId::parse(peer)
                    .ok()
                    .and_then(|d| d.key())
                    .ok_or_else(|| {
                        self.bad(format!(
                            "connection {name}: peer {peer:?} is not a key principal (ak:did_core:key:…)"
                        ))
                    })?;
                let key = match self.optional_text(obj, "key_file")? {
                    Some(file) => self.key(file)?,
                    None => controller.clone(),
                };
                ConnectionKind::Link {
                    address,
                    listen,
                    key: Box::new(key),
                    peer,
                }
            }
            other => {
                return Err(self.bad(format!(
                    "connection {name}: kind {other:?} is not stub, tcp or link"
                )))
            }
        };
        Ok(ConnectionDeclaration { name, kind })
    }
}

impl ConfigFile {
    /// Reads and checks the file at `path` (and the key files it names).
    pub fn read(path: &Path) -> Result<ConfigFile, Error> {
        let r = Reader { path };
        let bytes = read_bounded(path)?;
        let doc = parse_value(&bytes).map_err(|e| r.bad(format!("not JSON ({})", e.message())))?;
        let doc = r.object(&doc, "the configuration")?;
        let controller = r.identity(
            doc.get("controller")
                .ok_or_else(|| r.bad("controller is missing"))?,
            "controller",
        )?;
        let sidecar_text = r.text(doc, "sidecar_id")?;
        let sidecar = SidecarId::parse(sidecar_text)
            .map_err(|e| r.bad(format!("sidecar_id {sidecar_text:?}: {}", e.message())))?;
        let mut runtime = RuntimeConfig::new(sidecar, controller);
        if let Some(a) = r.optional_text(doc, "address")? {
            runtime.address = a.to_string();
        }
        if let Some(e) = r.positive(doc, "epoch")? {
            runtime.epoch = e;
        }
        for agent in r.list(doc, "agents")? {
            runtime.agents.push(r.identity(agent, "an agent")?);
        }
        if let Some(book) = doc.get("address_book") {
            for (address, did) in r.object(book, "address_book")?.iter() {
                let did = did
                    .as_str()
                    .and_then(|d| DidCoreId::parse(d).ok())
                    .ok_or_else(|| r.bad(format!("address_book.{address} is not a did_core_id")))?;
                runtime.address_book.insert(address.to_string(), did);
            }
        }
        let mut policy = Policy::default();
        if let Some(secs) = r.natural(doc, "timeout_secs")? {
            policy.timeout_ms = Some(secs.saturating_mul(1000));
        }
        if let Some(code) = r.optional_text(doc, "timeout_code")? {
            policy.timeout_code = code.to_string();
        }
        runtime.policy = policy;
        let mut connections = Vec::new();
        for c in r.list(doc, "connections")? {
            connections.push(r.connection(c, &runtime.controller.key)?);
        }
        let mut routes = BTreeMap::new();
        if let Some(v) = doc.get("routes") {
            for (address, name) in r.object(v, "routes")?.iter() {
                let name = name
                    .as_str()
                    .ok_or_else(|| r.bad(format!("routes.{address} is not a connection name")))?;
                routes.insert(address.to_string(), name.to_string());
            }
        }
        let mut skills = Vec::new();
        for s in r.list(doc, "skills")? {
            let obj = r.object(s, "a skill")?;
            skills.push(SkillDeclaration {
                name: r.text(obj, "name")?.to_string(),
                kind: r.text(obj, "kind")?.to_string(),
                settings: obj
                    .get("settings")
                    .cloned()
                    .unwrap_or_else(|| Object::new().into()),
            });
        }
        Ok(ConfigFile {
            runtime,
            connections,
            routes,
            skills,
            path: path.to_path_buf(),
        })
    }

    /// Opens the declared connections (after `first`, if given: the default) and routes
    /// them.
    pub fn multiplexer(
        &self,
        first: Option<(&str, Box<dyn crate::Connection>)>,
    ) -> Result<Multiplexer, Error> {
        let mut mux = Multiplexer::new();
        if let Some((name, connection)) = first {
            mux.add_boxed(name, connection)?;
        }
        for c in &self.connections {
            mux.add_boxed(&c.name, c.open()?)
                .map_err(|e| self.declared(e))?;
        }
        for (address, name) in &self.routes {
            mux.route(address, name).map_err(|e| self.declared(e))?;
        }
        Ok(mux)
    }

    /// Builds the declared skills with `catalog`.
    pub fn build_skills(&self, catalog: &SkillCatalog) -> Result<Vec<Skill>, Error> {
        self.skills
            .iter()
            .map(|d| catalog.build(d).map_err(|e| self.declared(e)))
            .collect()
    }

    /// A declaration that cannot be built is the file's fault: `e`, naming the file.
    fn declared(&self, e: Error) -> Error {
        match e {
            Error::Misuse(why) => Error::Misuse(format!("{}: {why}", self.path.display())),
            other => other,
        }
    }
}

/// The file's bytes, at most [`MAX_RUNTIME_CONFIG_BYTES`].
fn read_bounded(path: &Path) -> Result<Vec<u8>, Error> {
    use std::io::Read as _;
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .map_err(io)?
        .take(MAX_RUNTIME_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_RUNTIME_CONFIG_BYTES {
        return Err(Error::Misuse(format!(
            "{}: larger than {MAX_RUNTIME_CONFIG_BYTES} bytes; not a configuration",
            path.display()
        )));
    }
    Ok(bytes)
}
