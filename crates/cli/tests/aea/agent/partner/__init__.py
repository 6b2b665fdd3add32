"""The test partner: pings whoever partner.json names and checks every answer against the
agent's own dialogues, or echoes what it is sent, as aea's echo skill does."""
