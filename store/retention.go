package store

// Checkpoint retention: what a store keeps of a thread's older
// checkpoints. The newest KeepLatest checkpoints of a thread are all
// kept (history, state, rewinds to any of them). Of the older ones a
// store keeps only the checkpoints that hold messages no later
// checkpoint has (the one before each summarization, removal or edit:
// the messages page rebuilds a summarised thread's visible history from
// them) and those written before checkpoints stored their messages once
// (schema upgrade); it deletes the rest, with the message rows no kept
// checkpoint refers to. A store enforces it while writing, every
// PruneEvery steps of a thread, so a thread holds at most KeepLatest +
// PruneEvery - 1 recent checkpoints besides the kept older ones.
const (
	// DefaultKeepLatest is the default of database.checkpoint_retention.keep_latest.
	DefaultKeepLatest = 100
	// PruneEvery is how often (in steps: checkpoints with Step a
	// multiple of it) a write enforces retention.
	PruneEvery = 32
)

// Retention is the checkpoint retention policy of a store. The zero
// value keeps the DefaultKeepLatest newest checkpoints of each thread.
type Retention struct {
	// KeepLatest is how many of each thread's newest checkpoints are
	// kept whole; 0 means DefaultKeepLatest, a negative value keeps
	// every checkpoint.
	KeepLatest int
}

// Keep returns the number of newest checkpoints kept, or 0 when every
// checkpoint is kept.
func (r Retention) Keep() int {
	switch {
	case r.KeepLatest < 0:
		return 0
	case r.KeepLatest == 0:
		return DefaultKeepLatest
	}
	return r.KeepLatest
}

// Prunes reports whether the write of a checkpoint at step enforces r.
func (r Retention) Prunes(step int) bool {
	return r.Keep() > 0 && step > 0 && step%PruneEvery == 0
}
