//! The index record of an admitted event: what the in-memory state needs to be rebuilt on
//! open without reading (or parsing) the log. Fixed little-endian layout, documented in
//! `docs/format.md` ("Index records"); decoding is total (no panics on damaged bytes).
//!
//! ```text
//! record := id[33] segment:u32le offset:u64le stamp:u64le role nparents:u16le parent:u32le*
//! role   := 0x00                                  plain
//!         | 0x01                                  ak.realm.create
//!         | 0x02 realm[33] len:u16le controller   ak.sidecar.create (controller: the
//!                                                 actor's canonical ActorId JSON)
//!         | 0x03 sidecar[33]                      in a sidecar's scope
//!         | 0x04 realm[33]                        ak.strand.create
//!         | 0x05 sidecar[33] strand[33] ver:u64le ak.sidecar.context.attach
//! ```
#![cfg_attr(
    feature = "internals",
    allow(missing_docs, clippy::len_without_is_empty)
)]

use crate::canonical::parse_canonical;
use crate::codec::{Out, Reader};
use crate::dag::Pos;
use crate::did::{ActorId, DidCoreId};
use crate::envelope::Body;
use crate::event::Event;
use crate::id::{EventId, RealmId, SidecarId, StrandId};
use crate::store::log::LogPos;

/// What the index keeps of an admitted event.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Record {
    /// The event.
    pub id: EventId,
    /// Where the log holds its bytes.
    pub at: LogPos,
    /// `created_at` in milliseconds.
    pub stamp: u64,
    /// DAG parents: causal refs in ref order, then the scope's create event.
    pub parents: Vec<Pos>,
    /// What the event registers, or where it lives.
    pub role: Role,
}

/// The part of an event the registry and the per-sidecar lists need.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Role {
    /// Nothing special.
    Plain,
    /// `ak.realm.create`.
    RealmCreate,
    /// `ak.sidecar.create` in `realm`, controlled by `controller`.
    SidecarCreate {
        /// The realm.
        realm: RealmId,
        /// The create event's complete actor (PROFILE §1, §6).
        controller: ActorId,
    },
    /// An event in a sidecar's scope.
    InSidecar(SidecarId),
    /// `ak.strand.create` in `realm`.
    StrandCreate {
        /// The realm.
        realm: RealmId,
    },
    /// `ak.sidecar.context.attach` of `sidecar` to `strand` at `version`.
    Attach {
        /// The sidecar.
        sidecar: SidecarId,
        /// The attached strand.
        strand: StrandId,
        /// The attach's version.
        version: u64,
    },
    /// One version of an actor's model (PROFILE §14.1).
    ActorModel {
        /// The actor.
        did: DidCoreId,
        /// The model's version.
        version: u64,
    },
}

impl Role {
    /// The role of an event.
    pub fn of(event: &Event) -> Role {
        match (
            event.body(),
            event.scope().realm_id(),
            event.scope().sidecar_id(),
        ) {
            (Body::RealmCreate, _, _) => Role::RealmCreate,
            (Body::SidecarCreate, Some(realm), _) => Role::SidecarCreate {
                realm,
                controller: event.actor().clone(),
            },
            (Body::StrandCreate, Some(realm), _) => Role::StrandCreate { realm },
            (Body::ContextAttach(a), _, _) => Role::Attach {
                sidecar: a.sidecar_id,
                strand: a.strand_id,
                version: a.version,
            },
            (Body::ActorModel(m), _, _) => Role::ActorModel {
                did: m.entity.did().clone(),
                version: m.entity.version(),
            },
            (_, _, Some(sidecar)) => Role::InSidecar(sidecar),
            _ => Role::Plain,
        }
    }

    /// Appends the role's encoding (kind byte, then its data; see `docs/format.md`).
    pub fn encode_into(&self, out: &mut (impl Out + ?Sized)) {
        match self {
            Role::Plain => out.put(&[0]),
            Role::RealmCreate => out.put(&[1]),
            Role::SidecarCreate { realm, controller } => {
                out.put(&[2]);
                out.put(realm.bytes());
                let text = controller.to_json().to_bytes();
                out.put(&u16::try_from(text.len()).unwrap_or(u16::MAX).to_le_bytes());
                out.put(&text);
            }
            Role::InSidecar(sidecar) => {
                out.put(&[3]);
                out.put(sidecar.bytes());
            }
            Role::StrandCreate { realm } => {
                out.put(&[4]);
                out.put(realm.bytes());
            }
            Role::Attach {
                sidecar,
                strand,
                version,
            } => {
                out.put(&[5]);
                out.put(sidecar.bytes());
                out.put(strand.bytes());
                out.put(&version.to_le_bytes());
            }
            Role::ActorModel { did, version } => {
                out.put(&[6]);
                let text = did.as_str().as_bytes();
                out.put(&u16::try_from(text.len()).unwrap_or(u16::MAX).to_le_bytes());
                out.put(text);
                out.put(&version.to_le_bytes());
            }
        }
    }

    /// Reads what [`Role::encode_into`] wrote; `None` when the bytes are damaged.
    pub(crate) fn decode_from(r: &mut Reader<'_>) -> Option<Role> {
        Some(match r.array::<1>()? {
            [0] => Role::Plain,
            [1] => Role::RealmCreate,
            [2] => {
                let realm = RealmId::from_bytes(&r.array()?).ok()?;
                let len = usize::from(u16::from_le_bytes(r.array()?));
                let json = parse_canonical(r.take(len)?).ok()?;
                Role::SidecarCreate {
                    realm,
                    controller: ActorId::from_json(&json).ok()?,
                }
            }
            [3] => Role::InSidecar(SidecarId::from_bytes(&r.array()?).ok()?),
            [4] => Role::StrandCreate {
                realm: RealmId::from_bytes(&r.array()?).ok()?,
            },
            [5] => Role::Attach {
                sidecar: SidecarId::from_bytes(&r.array()?).ok()?,
                strand: StrandId::from_bytes(&r.array()?).ok()?,
                version: u64::from_le_bytes(r.array()?),
            },
            [6] => {
                let len = usize::from(u16::from_le_bytes(r.array()?));
                let text = std::str::from_utf8(r.take(len)?).ok()?;
                Role::ActorModel {
                    did: DidCoreId::parse(text).ok()?,
                    version: u64::from_le_bytes(r.array()?),
                }
            }
            _ => return None,
        })
    }
}

impl Record {
    /// The fixed little-endian encoding.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + 4 * self.parents.len());
        out.extend_from_slice(self.id.bytes());
        out.extend_from_slice(&self.at.segment.to_le_bytes());
        out.extend_from_slice(&self.at.offset.to_le_bytes());
        out.extend_from_slice(&self.stamp.to_le_bytes());
        self.role.encode_into(&mut out);
        out.extend_from_slice(
            &u16::try_from(self.parents.len())
                .unwrap_or(u16::MAX)
                .to_le_bytes(),
        );
        for p in &self.parents {
            out.extend_from_slice(&p.get().to_le_bytes());
        }
        out
    }

    /// Decodes a record; `None` when the bytes are damaged.
    pub fn decode(bytes: &[u8]) -> Option<Record> {
        let mut r = Reader::new(bytes);
        let id = EventId::from_bytes(&r.array()?).ok()?;
        let at = LogPos::new(
            u32::from_le_bytes(r.array()?),
            u64::from_le_bytes(r.array()?),
        );
        let stamp = u64::from_le_bytes(r.array()?);
        let role = Role::decode_from(&mut r)?;
        let n = usize::from(u16::from_le_bytes(r.array()?));
        let parents = (0..n)
            .map(|_| r.array().map(|b| Pos::new(u32::from_le_bytes(b))))
            .collect::<Option<Vec<_>>>()?;
        r.is_empty().then_some(Record {
            id,
            at,
            stamp,
            parents,
            role,
        })
    }
}
