package sqlite

// SchemaV1 is the DDL of schema version 1.
var SchemaV1 = schemaV1

// Counts returns the messages s has encoded for writing and decoded from
// their rows.
func Counts(s *Store) (encoded, decoded int64) { return s.parents.Counts() }
