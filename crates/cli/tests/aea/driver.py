"""The other end of `akledger sidecar run`'s two files, played with the aea 1.2.5 library
itself: envelopes written by `aea.helpers.file_io.write_envelope` (under its lock), replies
taken as AEA's stub connection takes its input (read whole under the lock, emptied, cut with
the stub's rule, decoded by `envelope_from_bytes`), and every reply checked by the
library's own `DefaultDialogues`. Prints one JSON object: what was sent and what the
dialogues accepted.

    python driver.py --input IN --output OUT --count N [--second] [--payload HEX]
                     [--hold-lock-ms MS] [--raw HEX] [--patience SECONDS]

IN is the sidecar's input file (this side writes it), OUT its output file (this side
empties it). Run from the directory holding the generated `packages/`.
"""
import argparse
import json
import re
import time

from aea.common import Address
from aea.helpers.file_io import envelope_from_bytes, lock_file, write_envelope
from aea.mail.base import Envelope
from aea.protocols.base import Message
from aea.protocols.dialogue.base import Dialogue

from packages.fetchai.protocols.default.dialogues import DefaultDialogue, DefaultDialogues
from packages.fetchai.protocols.default.message import DefaultMessage

RECORD = re.compile(b"(?:[^,]*,){3}.*,\n?", re.DOTALL)


def role(message: Message, receiver_address: Address) -> Dialogue.Role:
    """The default protocol has one role."""
    return DefaultDialogue.Role.AGENT


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--input", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--to", default="sidecar")
    parser.add_argument("--sender", default="client")
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--payload", default=None, help="hex content of every ping")
    parser.add_argument("--second", action="store_true", help="answer each echo once more")
    parser.add_argument("--hold-lock-ms", type=int, default=0, help="write each record in two halves under one held lock")
    parser.add_argument("--raw", action="append", default=[], help="hex bytes appended as they are, under the lock")
    parser.add_argument("--expect", type=int, default=None, help="replies to wait for: echoes, errors and rejected ones (default: count, twice with --second)")
    parser.add_argument("--patience", type=float, default=120.0)
    args = parser.parse_args()

    dialogues = DefaultDialogues(self_address=args.sender, role_from_first_message=role)
    report = {"sent": 0, "echoes": 0, "second_echoes": 0, "rejected": 0, "mismatched": 0,
              "errors": {}, "records": 0, "undecodable": 0, "round_trips_ms": []}
    contents = {}
    sent_at = {}
    with open(args.input, "ab") as sink:
        for raw in args.raw:
            with lock_file(sink):
                sink.write(bytes.fromhex(raw))
                sink.flush()
        for n in range(args.count):
            content = bytes.fromhex(args.payload) if args.payload else f"ping {n}".encode()
            message, _ = dialogues.create(counterparty=args.to, performative=DefaultMessage.Performative.BYTES, content=content)
            contents[message.dialogue_reference[0]] = content
            sent_at[message.dialogue_reference[0]] = time.perf_counter()
            envelope = Envelope(to=message.to, sender=message.sender, message=message)
            if args.hold_lock_ms:
                record = (b",".join([envelope.to.encode(), envelope.sender.encode(),
                                      str(envelope.protocol_specification_id).encode(),
                                      envelope.message_bytes]) + b",")
                with lock_file(sink):
                    sink.write(record[: len(record) // 2])
                    sink.flush()
                    time.sleep(args.hold_lock_ms / 1000)
                    sink.write(record[len(record) // 2:])
                    sink.flush()
            else:
                write_envelope(envelope, sink)
            report["sent"] += 1

        expect = args.expect if args.expect is not None else args.count * (2 if args.second else 1)
        deadline = time.time() + args.patience
        with open(args.output, "ab+") as source:
            def replies() -> int:
                return (report["echoes"] + report["second_echoes"] + report["rejected"]
                        + sum(report["errors"].values()))

            while time.time() < deadline and replies() < expect:
                with lock_file(source):
                    source.seek(0)
                    data = source.read()
                    if data:
                        source.truncate(0)
                if not data:
                    time.sleep(0.001)
                    continue
                for record in [m.group(0) for m in RECORD.finditer(data)]:
                    report["records"] += 1
                    envelope = envelope_from_bytes(record)
                    if envelope is None:
                        report["undecodable"] += 1
                        continue
                    try:
                        reply = DefaultMessage.serializer.decode(envelope.message_bytes)
                    except Exception:  # the library's own decoding failed
                        report["undecodable"] += 1
                        continue
                    reply.sender = envelope.sender
                    reply.to = envelope.to
                    if reply.performative == DefaultMessage.Performative.ERROR:
                        name = reply.error_code.name
                        report["errors"][name] = report["errors"].get(name, 0) + 1
                    dialogue = dialogues.update(reply)
                    if dialogue is None:
                        report["rejected"] += 1
                        continue
                    if reply.performative != DefaultMessage.Performative.BYTES:
                        continue
                    reference = reply.dialogue_reference[0]
                    if reply.message_id == -1 and reply.content == contents.get(reference):
                        report["echoes"] += 1
                        report["round_trips_ms"].append((time.perf_counter() - sent_at[reference]) * 1000)
                        if args.second:
                            second = dialogue.reply(performative=DefaultMessage.Performative.BYTES,
                                                    target_message=reply, content=b"and again")
                            write_envelope(Envelope(to=second.to, sender=second.sender, message=second), sink)
                    elif reply.message_id == -2 and reply.content == b"and again":
                        report["second_echoes"] += 1
                    else:
                        report["mismatched"] += 1
    print(json.dumps(report))


if __name__ == "__main__":
    main()
