"""The HTTP faces of the service: the client API, the seller API, and what they share."""
