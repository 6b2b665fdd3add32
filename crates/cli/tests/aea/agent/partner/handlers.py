"""Checks every answer against the agent's dialogues, or echoes."""
import time

from aea.protocols.base import Message
from aea.skills.base import Handler

from packages.fetchai.protocols.default.message import DefaultMessage


class PartnerHandler(Handler):
    """Counts what the dialogues accept and reject; answers the first echo of each dialogue
    with a second message when partner.json asks; echoes bytes when it asks for that."""

    SUPPORTED_PROTOCOL = DefaultMessage.protocol_id

    def setup(self) -> None:
        pass

    def handle(self, message: Message) -> None:
        dialogues = self.context.default_dialogues
        plan = dialogues.plan
        dialogue = dialogues.update(message)
        if dialogue is None:
            self.context.logger.warning(f"rejected by the dialogues: {message}")
            dialogues.note("rejected")
            dialogues.send_pings(self.context.outbox)
            if plan.get("echo"):
                reply, _ = dialogues.create(
                    counterparty=message.sender,
                    performative=DefaultMessage.Performative.ERROR,
                    error_code=DefaultMessage.ErrorCode.INVALID_DIALOGUE,
                    error_msg="Invalid dialogue.",
                    error_data={"default_message": message.encode()},
                )
                self.context.outbox.put_message(message=reply)
            return
        if message.performative == DefaultMessage.Performative.ERROR:
            errors = dialogues.report["errors"]
            errors[message.error_code.name] = errors.get(message.error_code.name, 0) + 1
            dialogues.save()
            return
        if message.performative != DefaultMessage.Performative.BYTES:
            return
        if plan.get("echo"):
            reply = dialogue.reply(
                performative=DefaultMessage.Performative.BYTES,
                target_message=message,
                content=message.content,
            )
            self.context.outbox.put_message(message=reply)
            dialogues.note("echoed")
            return
        reference = message.dialogue_reference[0]
        if message.message_id == -1:
            if message.content != dialogues.contents.get(reference):
                dialogues.note("mismatched")
                return
            started = dialogues.sent_at.get(reference)
            if started is not None:
                dialogues.report["round_trips_ms"].append((time.perf_counter() - started) * 1000)
            dialogues.note("echoes")
            dialogues.send_pings(self.context.outbox)
            if plan.get("second"):
                second = dialogue.reply(
                    performative=DefaultMessage.Performative.BYTES,
                    target_message=message,
                    content=b"and again",
                )
                self.context.outbox.put_message(message=second)
                dialogues.note("second_sent")
        elif message.message_id == -2 and message.content == b"and again":
            dialogues.note("second_echoes")
        else:
            dialogues.note("mismatched")

    def teardown(self) -> None:
        pass
