package config

// AgentsAPI is the agents_api section: whether the gateway serves the
// custom-agent management routes (list, check, read, create, update,
// delete under /api/agents). DeerFlow closes them unless the section says
// enabled: true; Antler serves them unless the section says enabled:
// false (docs/differences.md, "The custom-agent routes are open unless
// agents_api closes them"). Runs of custom agents are not affected
// either way: only the HTTP management routes close.
type AgentsAPI struct {
	// Enabled opens (true) or closes (false) the routes; nil (absent or
	// null) keeps Antler's default, open.
	Enabled *bool `yaml:"enabled"`
}

// Closed reports whether the section closes the agent management routes.
func (a AgentsAPI) Closed() bool { return a.Enabled != nil && !*a.Enabled }
