package sqlite

// SchemaV1 is the DDL of schema version 1.
var SchemaV1 = schemaV1
