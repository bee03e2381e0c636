package config

// InputPolish is the input_polish section: POST /api/input-polish
// rewrites a draft of the composer with a model before it is sent
// (DeerFlow's input_polish router).
type InputPolish struct {
	// Enabled exposes the route (default true, as DeerFlow's); off, it
	// answers 404.
	Enabled bool `yaml:"enabled"`
	// MaxChars is the longest draft accepted, in characters after
	// trimming (default 4000, at least 1).
	MaxChars int `yaml:"max_chars"`
	// ModelName names the models[] entry that rewrites; null (the
	// default) uses the default model.
	ModelName string `yaml:"model_name"`
}

func defaultInputPolish() InputPolish { return InputPolish{Enabled: true, MaxChars: 4000} }

func (p *parser) validateInputPolish() {
	atLeast(p, "input_polish.max_chars", p.cfg.InputPolish.MaxChars, 1)
	p.checkModelName("input_polish.model_name", p.cfg.InputPolish.ModelName)
}
