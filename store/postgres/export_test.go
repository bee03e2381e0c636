package postgres

// SchemaVersion is the schema version this Antler writes: the number of
// migrations.
func SchemaVersion() int { return len(migrations) }

// The error texts of runs failed by a lost lease and by the sweep.
const (
	LostLeaseError   = lostLeaseError
	OrphanedRunError = orphanedRunError
)

// Counts returns the messages s has encoded for writing and decoded from
// their rows.
func Counts(s *Store) (encoded, decoded int64) { return s.parents.Counts() }
