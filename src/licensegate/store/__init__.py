"""Persistence: the schema, migrations, one thin adapter per database, and the SQL of each concept."""
