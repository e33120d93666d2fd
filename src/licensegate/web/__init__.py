"""Pages people open in a browser (the password-reset page; later, the dashboard)."""
