package scheduler

// WaitWatches waits until the outcome of every run d launched is
// recorded.
func (d *Dispatcher) WaitWatches() { d.watches.Wait() }
