"""A reply of the assistant as one state object, from the first frame to the
saved row.

- `Reply` is the state: what the Message row stores, what the page and the
  socket's frames render (templates/chats/_reply.html). A saved row becomes
  one with `Reply.of(message)`.
- `Generation` is that same Reply while a task in this web process writes it
  (apps.chats.runner mutates it, apps.chats.live renders its frames): the
  fields only the writer needs are added, nothing is copied.
- `Snapshot` is the saver's frozen copy of it (`reply.snapshot()`), taken on
  the event loop and written from a thread (apps.chats.saving).

What "in flight" means lives on the model (`Message.IN_FLIGHT`,
`Message.WRITING`); a Reply asks the same sets.
"""

from apps.chats.reply.state import Generation, Reply, Snapshot

__all__ = ["Generation", "Reply", "Snapshot"]
