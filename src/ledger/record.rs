//! The index record of an admitted event: what the in-memory state needs to be rebuilt on
//! open without reading (or parsing) the log. Records are stored in batch rows, each
//! encoded against the one before it in its row ([`RowContext`]), documented in
//! `docs/format.md` ("Index record"); decoding is total (no panics on damaged bytes).
//!
//! ```text
//! record := id[33] segment:svarint offset:varint stamp:svarint role
//!           nparents:varint (own - parent):svarint*
//!           (segment and stamp: differences from the row's previous record, from 0 first)
//! role   := 0x00                                  plain
//!         | 0x01                                  ak.realm.create
//!         | 0x02 realm[33] len:u16le controller   ak.sidecar.create (controller: the
//!                                                 actor's canonical ActorId JSON)
//!         | 0x03 sidecar[33]                      in a sidecar's scope
//!         | 0x04 realm[33]                        ak.strand.create
//!         | 0x05 sidecar[33] strand[33] ver:u64le ak.sidecar.context.attach
//!         | 0x06 len:u16le did ver:u64le          ak.actor.model
//!         | 0x07                                  in the scope of the sidecar the row's
//!                                                 last 0x03 or 0x07 named
//! ```
#![cfg_attr(
    feature = "internals",
    allow(missing_docs, clippy::len_without_is_empty)
)]

use crate::canonical::parse_canonical;
use crate::codec::{put_signed_varint, put_varint, Out, Reader};
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

/// What a batch row's records are encoded against: the record before them in the row.
/// Each record stores its segment and stamp as differences from the previous record's,
/// and an event in the same sidecar's scope as the last one the row named stores no id
/// for it (role 7). A row starts from zeros and no sidecar.
#[derive(Clone, Debug, Default)]
pub struct RowContext {
    segment: u32,
    stamp: u64,
    sidecar: Option<SidecarId>,
}

impl RowContext {
    /// Notes the sidecar a record's role names for the next records.
    fn saw(&mut self, role: &Role) {
        if let Role::InSidecar(sidecar) = role {
            self.sidecar = Some(*sidecar);
        }
    }
}

/// Role 7 in a row: the event is in the scope of the sidecar the row named last.
const SAME_SIDECAR: u8 = 7;

impl Record {
    /// Appends this record, admitted at position `own`, to a batch row after the records
    /// `row` has seen (see `docs/format.md`, "Index record"): the id, the segment as a
    /// signed difference from the previous record's, the entry's offset, the stamp as a
    /// signed difference, the role, and each parent as its distance back from `own`.
    pub fn encode_in_row(&self, own: u32, row: &mut RowContext, out: &mut Vec<u8>) {
        out.extend_from_slice(self.id.bytes());
        put_signed_varint(
            out,
            i64::from(self.at.segment)
                - i64::from(std::mem::replace(&mut row.segment, self.at.segment)),
        );
        put_varint(out, self.at.offset);
        put_signed_varint(
            out,
            self.stamp
                .wrapping_sub(std::mem::replace(&mut row.stamp, self.stamp)) as i64,
        );
        match &self.role {
            Role::InSidecar(sidecar) if row.sidecar == Some(*sidecar) => out.push(SAME_SIDECAR),
            role => role.encode_into(out),
        }
        row.saw(&self.role);
        put_varint(out, self.parents.len() as u64);
        for p in &self.parents {
            put_signed_varint(out, i64::from(own) - i64::from(p.get()));
        }
    }

    /// Reads a record [`Record::encode_in_row`] wrote for position `own`; `None` when the
    /// bytes are damaged (a parent or segment out of range included).
    pub fn decode_in_row(r: &mut Reader<'_>, own: u32, row: &mut RowContext) -> Option<Record> {
        let id = EventId::from_bytes(&r.array()?).ok()?;
        let segment = i64::from(row.segment).checked_add(r.signed_varint()?)?;
        row.segment = u32::try_from(segment).ok()?;
        let at = LogPos::new(row.segment, r.varint()?);
        row.stamp = row.stamp.wrapping_add(r.signed_varint()? as u64);
        let role = match r.peek()? {
            SAME_SIDECAR => {
                r.take(1)?;
                Role::InSidecar(row.sidecar?)
            }
            _ => Role::decode_from(r)?,
        };
        row.saw(&role);
        let n = usize::try_from(r.varint()?).ok()?;
        // Each parent takes a byte at least: a count the row cannot hold is damage.
        let mut parents = Vec::with_capacity(n.min(r.len()));
        for _ in 0..n {
            let parent = i64::from(own).checked_sub(r.signed_varint()?)?;
            parents.push(Pos::new(u32::try_from(parent).ok()?));
        }
        Some(Record {
            id,
            at,
            stamp: row.stamp,
            parents,
            role,
        })
    }
}
