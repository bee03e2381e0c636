package memory

// SetBeforeRename installs the crash hook of a FileStorage.
func SetBeforeRename(s *FileStorage, f func(tmp string) error) { s.beforeRename = f }

// SearchCacheStats returns the users whose full-text index is kept, most
// recent first, and the number of indexes built.
func SearchCacheStats(m *Manager) ([]string, int) { return m.index.stats() }
