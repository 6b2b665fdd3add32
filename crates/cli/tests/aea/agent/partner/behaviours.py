"""Starts the pings of partner.json, and a message of a dialogue nobody started when it
asks for one."""
from aea.skills.behaviours import OneShotBehaviour

from packages.fetchai.protocols.default.message import DefaultMessage


class PingBehaviour(OneShotBehaviour):
    """Acts once, when the agent starts."""

    def setup(self) -> None:
        pass

    def act(self) -> None:
        dialogues = self.context.default_dialogues
        plan = dialogues.plan
        if plan.get("unknown_dialogue"):
            message = DefaultMessage(
                performative=DefaultMessage.Performative.BYTES,
                dialogue_reference=("f" * 64, "e" * 64),
                message_id=2,
                target=-1,
                content=b"out of nowhere",
            )
            message.to = plan["to"]
            message.sender = self.context.agent_name
            self.context.outbox.put_message(message=message)
            dialogues.note("unknown_sent")
        dialogues.send_pings(self.context.outbox)

    def teardown(self) -> None:
        pass
