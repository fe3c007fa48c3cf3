"""The classic consumer protocol's member side, shared by every client binding.

What a member announces in its user data (:mod:`.user_data`), how the leader turns
the members' subscriptions into the core model, runs a strategy, validates the result
and remembers static members (:mod:`.leader`). No client library is imported here.
"""
