package memory

// SetBeforeRename installs the crash hook of a FileStorage.
func SetBeforeRename(s *FileStorage, f func(tmp string) error) { s.beforeRename = f }
