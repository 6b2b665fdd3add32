"""The agent's default-protocol dialogues (the framework's own bookkeeping), and the plan
and report files the test reads and writes."""
import json
import os
import time
from pathlib import Path
from typing import Any, Dict

from aea.common import Address
from aea.protocols.base import Message
from aea.protocols.dialogue.base import Dialogue
from aea.skills.base import Model

from packages.fetchai.protocols.default.dialogues import DefaultDialogue
from packages.fetchai.protocols.default.dialogues import DefaultDialogues as BaseDialogues
from packages.fetchai.protocols.default.message import DefaultMessage


def role(message: Message, receiver_address: Address) -> Dialogue.Role:
    """The default protocol has one role."""
    return DefaultDialogue.Role.AGENT


class DefaultDialogues(Model, BaseDialogues):
    """The agent's dialogues (its address in them is its name, or its address when the plan
    says `by_address`), plus the test's plan and
    report."""

    def __init__(self, **kwargs: Any) -> None:
        Model.__init__(self, **kwargs)
        self.plan: Dict[str, Any] = json.loads(Path("partner.json").read_text())
        # Its name, unless the plan says its address (what fetchai/tcp announces).
        me = self.context.agent_address if self.plan.get("by_address") else self.context.agent_name
        BaseDialogues.__init__(self, self_address=me, role_from_first_message=role)
        self.report: Dict[str, Any] = {
            "sent": 0,
            "echoes": 0,
            "mismatched": 0,
            "rejected": 0,
            "errors": {},
            "second_sent": 0,
            "second_echoes": 0,
            "echoed": 0,
            "round_trips_ms": [],
        }
        self.queue = [bytes.fromhex(p) for p in self.plan.get("pings", [])]
        self.contents: Dict[str, bytes] = {}
        self.sent_at: Dict[str, float] = {}

    def note(self, key: str, by: int = 1) -> None:
        """Counts `key` and rewrites report.json (atomically)."""
        self.report[key] = self.report.get(key, 0) + by
        self.save()

    def save(self) -> None:
        """Rewrites report.json atomically."""
        tmp = Path("report.json.tmp")
        tmp.write_text(json.dumps(self.report))
        os.replace(tmp, "report.json")

    def send_pings(self, outbox: Any) -> None:
        """Sends the queued pings: all of them (a burst), or the next one when nothing is
        in flight (`sequential`)."""
        in_flight = self.report["sent"] - self.report["echoes"] - self.report["rejected"]
        while self.queue and (not self.plan.get("sequential") or in_flight == 0):
            content = self.queue.pop(0)
            message, _ = self.create(
                counterparty=self.plan["to"],
                performative=DefaultMessage.Performative.BYTES,
                content=content,
            )
            self.contents[message.dialogue_reference[0]] = content
            self.sent_at[message.dialogue_reference[0]] = time.perf_counter()
            outbox.put_message(message=message)
            self.note("sent")
            in_flight += 1
