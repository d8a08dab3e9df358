"""Does a message need long-term memory? A learned reading of the message (``model``)."""
