"""The terminal panel of agent chats: one shell per chat on its SSH profile's
machine, shared by the person's tabs (session.py, registry.py), started with
OSC 133 prompt marks (marks.py); the socket is apps/agents/consumers.py."""
