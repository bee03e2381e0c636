package toolset

// DefaultRegistry returns a registry holding every tool and model
// provider Antler implements, under DeerFlow's use strings and Antler's
// short names. It is the one place where use strings are wired to Go
// factories; each area registers in its own file (default_*.go).
func DefaultRegistry() *Registry {
	r := NewRegistry()
	registerCommand(r)
	registerSandbox(r)
	registerModels(r)
	registerCommunity(r)
	registerBrowser(r)
	return r
}
