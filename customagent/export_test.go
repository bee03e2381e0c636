package customagent

// SetTestHook installs a hook called at each step of an update ("stage:
// config.yaml", "stage:SOUL.md", "commit", "apply:config.yaml",
// "apply:SOUL.md"); an error aborts the update there.
func SetTestHook(s *Store, h func(step string) error) { s.testHook = h }

// ParseConfig lets the external tests decode a config.yaml directly.
var ParseConfig = parseConfig
