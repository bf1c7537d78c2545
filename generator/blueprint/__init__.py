"""Blueprint input: load YAML with source positions, validate against the schema, fill defaults."""
