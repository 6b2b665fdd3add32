//! The NATS JetStream client: the only module with async code. A tokio runtime with one
//! worker thread lives here (the connection's IO and a fetch started ahead run on it) and
//! every call blocks on it (`block_on` at this boundary), so the rest of the engine stays
//! synchronous. It knows the server's vocabulary (streams, consumers,
//! acknowledgements) and nothing of ledgers.

use std::time::Duration;

use async_nats::jetstream::consumer::{pull, AckPolicy, DeliverPolicy, PullConsumer};
use async_nats::jetstream::context::Context;
use async_nats::jetstream::message::PublishMessage;
use async_nats::jetstream::stream::{Config as StreamConfig, RetentionPolicy, StorageType};
use async_nats::jetstream::Message;
use futures_util::StreamExt;

use crate::limits::{
    REPLICATE_ACK_WAIT_SECS, REPLICATE_BATCH_BYTES, REPLICATE_BATCH_EVENTS,
    REPLICATE_DUPLICATE_WINDOW_SECS, REPLICATE_MAX_MESSAGE_BYTES,
};

use super::subject::STREAM_SUBJECTS;
use super::ReplicateError;

/// The runtime every call blocks on.
pub(super) struct Runtime {
    runtime: tokio::runtime::Runtime,
    /// How long one request may take.
    timeout: Duration,
}

/// One connection: the stream and this ledger's durable consumer on it.
pub(super) struct Session {
    js: Context,
    consumer: PullConsumer,
    /// The stream itself (to read back what it holds under a message id).
    stream: async_nats::jetstream::stream::Stream,
    /// The server's `max_payload`: the largest message (headers included) it takes.
    pub max_payload: usize,
    /// When the stream was created (nanoseconds since the Unix epoch, as the server says):
    /// another value than last time means it was deleted and made again.
    pub stream_created: String,
}

/// A message to publish.
pub(super) struct Outgoing {
    pub subject: String,
    /// The `Nats-Msg-Id` header ([`crate::message::Packed::message_id`]).
    pub id: String,
    /// Events packed into it.
    pub events: u64,
    /// Its payload as sent, encoded as `encoding` says ([`crate::message::ENCODING_HEADER`]).
    pub payload: Vec<u8>,
    pub encoding: Option<&'static str>,
}

/// A fetch running ahead on the runtime's worker ([`Runtime::fetch_ahead`]).
pub(super) struct Prefetch {
    task: tokio::task::JoinHandle<Result<Vec<Delivered>, async_nats::Error>>,
    limit: Duration,
}

/// A consumed message, acknowledged later through [`Runtime::ack_through`].
pub(super) struct Delivered {
    message: Message,
}

impl Delivered {
    /// The message's bytes.
    pub fn payload(&self) -> &[u8] {
        &self.message.payload
    }

    /// Its sequence in the stream (`?` when the server's reply subject does not say).
    pub fn sequence(&self) -> String {
        self.message
            .info()
            .map_or_else(|_| "?".into(), |info| info.stream_sequence.to_string())
    }

    /// How its bytes are encoded ([`crate::message::ENCODING_HEADER`]; `None`: as they are).
    pub fn encoding(&self) -> Option<&str> {
        let headers = self.message.headers.as_ref()?;
        Some(headers.get(crate::message::ENCODING_HEADER)?.as_str())
    }
}

/// `publish` with `message`'s payload and its encoding's header.
fn encoded(message: &Outgoing, publish: PublishMessage) -> PublishMessage {
    let publish = publish.payload(bytes::Bytes::from(message.payload.clone()));
    match message.encoding {
        Some(encoding) => publish.header(crate::message::ENCODING_HEADER, encoding),
        None => publish,
    }
}

impl Runtime {
    pub fn new(timeout: Duration) -> Result<Runtime, ReplicateError> {
        // One worker thread: the connection's reads and writes, and a fetch started ahead,
        // go on while the caller admits what the previous fetch brought.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| ReplicateError::Server(format!("starting the client runtime: {e}")))?;
        Ok(Runtime { runtime, timeout })
    }

    /// Runs `work` to completion, failing it after `limit`.
    fn run<T, E: std::fmt::Display>(
        &self,
        what: &str,
        limit: Duration,
        work: impl std::future::Future<Output = Result<T, E>>,
    ) -> Result<T, ReplicateError> {
        self.runtime.block_on(async {
            match tokio::time::timeout(limit, work).await {
                Ok(Ok(value)) => Ok(value),
                Ok(Err(e)) => Err(ReplicateError::Server(format!("{what}: {e}"))),
                Err(_) => Err(ReplicateError::Server(format!(
                    "{what}: no answer within {} ms",
                    limit.as_millis()
                ))),
            }
        })
    }

    /// Connects to `url`, creates the stream `stream` when it is missing (subjects
    /// `ak.*.events`, file storage, a duplicate window and a message size bound) and opens
    /// the durable pull consumer `consumer` on it (every message from the start, each
    /// acknowledgement covering the messages before it; messages a previous run took and
    /// never acknowledged are delivered again at once).
    pub fn connect(
        &self,
        url: &str,
        stream: &str,
        consumer: &str,
    ) -> Result<Session, ReplicateError> {
        let timeout = self.timeout;
        let options = async_nats::ConnectOptions::new()
            .connection_timeout(timeout)
            .request_timeout(Some(timeout))
            .max_reconnects(Some(1));
        let client = self.run(&format!("connect to {url}"), timeout, options.connect(url))?;
        let max_payload = client.server_info().max_payload;
        // The context spawns a task: it needs the runtime entered.
        let mut js = {
            let _entered = self.runtime.enter();
            async_nats::jetstream::new(client)
        };
        js.set_timeout(timeout);
        let config = StreamConfig {
            name: stream.to_owned(),
            subjects: vec![STREAM_SUBJECTS.to_owned()],
            retention: RetentionPolicy::Limits,
            storage: StorageType::File,
            duplicate_window: Duration::from_secs(REPLICATE_DUPLICATE_WINDOW_SECS),
            max_message_size: i32::try_from(REPLICATE_MAX_MESSAGE_BYTES).unwrap_or(i32::MAX),
            ..StreamConfig::default()
        };
        let stream_handle = self.run(
            &format!("open stream {stream}"),
            timeout,
            js.get_or_create_stream(config),
        )?;
        let stream_created = stream_handle
            .cached_info()
            .created
            .unix_timestamp_nanos()
            .to_string();
        let subjects = &stream_handle.cached_info().config.subjects;
        if !subjects.iter().any(|s| s == STREAM_SUBJECTS) {
            return Err(ReplicateError::Misuse(format!(
                "stream {stream} exists with subjects {subjects:?}, not {STREAM_SUBJECTS}"
            )));
        }
        let config = pull::Config {
            durable_name: Some(consumer.to_owned()),
            deliver_policy: DeliverPolicy::All,
            ack_policy: AckPolicy::All,
            ack_wait: Duration::from_secs(REPLICATE_ACK_WAIT_SECS),
            // Two batches in flight: one committing while the next is verified.
            max_ack_pending: i64::try_from(4 * REPLICATE_BATCH_EVENTS).unwrap_or(i64::MAX),
            ..pull::Config::default()
        };
        let what = format!("open consumer {consumer} on stream {stream}");
        let found = self.run(
            &what,
            timeout,
            stream_handle.get_or_create_consumer(consumer, config.clone()),
        )?;
        let info = found.cached_info();
        if info.num_ack_pending == 0 {
            return Ok(Session {
                js,
                consumer: found,
                stream: stream_handle,
                max_payload,
                stream_created,
            });
        }
        // Messages delivered and never acknowledged: only this ledger reads with this
        // consumer, so they went to a run that died (or to this one before the connection
        // was lost). The server would redeliver them only after the ack wait; the consumer
        // is made again from just after the last acknowledged message instead, so they come
        // now, in stream order. (Dying in between leaves no consumer: the next run makes one
        // from the start, and the repeats are duplicates.)
        let start_sequence = info.ack_floor.stream_sequence + 1;
        let config = pull::Config {
            deliver_policy: DeliverPolicy::ByStartSequence { start_sequence },
            ..config
        };
        let consumer = self.run(&what, timeout, async {
            stream_handle.delete_consumer(consumer).await?;
            stream_handle.create_consumer(config).await
        })?;
        Ok(Session {
            js,
            consumer,
            stream: stream_handle,
            max_payload,
            stream_created,
        })
    }

    /// Publishes `batch` (all sent, then every acknowledgement awaited); returns how many
    /// events the server stored as new. A message the server calls a duplicate (its
    /// message id is already in the stream) is read back: when what the stream holds under
    /// that id is not this message (anyone may publish junk under an event's id first), it
    /// is published again under its id and a random suffix nobody could have taken, and
    /// its events are counted in the second value.
    pub fn publish(
        &self,
        session: &Session,
        batch: Vec<Outgoing>,
    ) -> Result<(u64, u64), ReplicateError> {
        let js = &session.js;
        let stream = &session.stream;
        let limit = self.timeout.saturating_mul(2);
        self.run("publish", limit, async move {
            let mut acks = Vec::with_capacity(batch.len());
            for message in &batch {
                let publish = encoded(message, PublishMessage::build().message_id(&message.id));
                acks.push(js.send_publish(message.subject.clone(), publish).await?);
            }
            let (mut stored, mut squatted) = (0u64, 0u64);
            for (ack, message) in acks.into_iter().zip(&batch) {
                let ack = ack.await?;
                if !ack.duplicate {
                    stored += message.events;
                    continue;
                }
                let held = stream.get_raw_message(ack.sequence).await?;
                if held.payload.as_ref() == message.payload.as_slice() {
                    continue;
                }
                let mut nonce = [0u8; 8];
                rand_core::RngCore::fill_bytes(&mut rand_core::OsRng, &mut nonce);
                let suffix: String = nonce.iter().map(|b| format!("{b:02x}")).collect();
                let id = format!("{}+{suffix}", message.id);
                let publish = encoded(message, PublishMessage::build().message_id(id));
                js.send_publish(message.subject.clone(), publish)
                    .await?
                    .await?;
                stored += message.events;
                squatted += message.events;
            }
            Ok::<(u64, u64), async_nats::Error>((stored, squatted))
        })
    }

    /// Starts fetching the next messages of the consumer (at most one batch: what is there
    /// now, or, with `wait`, what arrives within it) on the runtime's worker, to be taken
    /// with [`Runtime::fetched`] while the caller works on the batch before it.
    pub fn fetch_ahead(&self, session: &Session, wait: Option<Duration>) -> Prefetch {
        let consumer = session.consumer.clone();
        let limit = self.timeout + wait.unwrap_or_default();
        let task = self.runtime.spawn(async move {
            let mut messages = match wait {
                None => {
                    consumer
                        .fetch()
                        .max_messages(REPLICATE_BATCH_EVENTS)
                        .max_bytes(REPLICATE_BATCH_BYTES)
                        .messages()
                        .await?
                }
                Some(wait) => {
                    consumer
                        .batch()
                        .max_messages(REPLICATE_BATCH_EVENTS)
                        .max_bytes(REPLICATE_BATCH_BYTES)
                        .expires(wait)
                        .messages()
                        .await?
                }
            };
            let mut delivered = Vec::new();
            while let Some(message) = messages.next().await {
                match message {
                    Ok(message) => delivered.push(Delivered { message }),
                    // The server ends a fetch whose next message would pass its byte bound
                    // with a status (409, "Message Size Exceeds MaxBytes"), which the client
                    // passes on as an error: what came is handed over, and the next fetch
                    // starts at that message. Any other failure that lasts is the next
                    // fetch's to report.
                    Err(_) if !delivered.is_empty() => break,
                    Err(e) => return Err(e),
                }
            }
            Ok::<_, async_nats::Error>(delivered)
        });
        Prefetch { task, limit }
    }

    /// The messages of a fetch started ahead, waiting for them (at most the fetch's time
    /// limit, counted from now); a fetch that does not finish in time is abandoned (its
    /// messages, unacknowledged, are delivered again later).
    pub fn fetched(&self, ahead: Prefetch) -> Result<Vec<Delivered>, ReplicateError> {
        let Prefetch { task, limit } = ahead;
        let abort = task.abort_handle();
        let result = self.run("fetch", limit, async move {
            match task.await {
                Ok(fetched) => fetched,
                Err(join) => Err(Box::new(join) as async_nats::Error),
            }
        });
        if result.is_err() {
            abort.abort();
        }
        result
    }

    /// Acknowledges `last` and, the consumer's policy being "all", every message delivered
    /// before it; waits for the server to confirm.
    pub fn ack_through(&self, last: &Delivered) -> Result<(), ReplicateError> {
        self.run("acknowledge", self.timeout, last.message.double_ack())
    }

    /// Sends the acknowledgement of `last` (and, the policy being "all", of every message
    /// before it) without waiting for the server's answer: a lost one only has the server
    /// deliver those messages again (duplicates here), and the last acknowledgement of a
    /// round is [`Runtime::ack_through`], which waits.
    pub fn ack_unconfirmed(&self, last: &Delivered) -> Result<(), ReplicateError> {
        self.run("acknowledge", self.timeout, last.message.ack())
    }
}
