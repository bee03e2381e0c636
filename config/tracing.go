package config

// Tracing is DeerFlow's tracing section: LangSmith and Langfuse tracing.
// DeerFlow sends its runs there through LangChain callbacks; Antler sends
// OpenTelemetry spans to each service's OTLP/HTTP endpoint instead
// (package telemetry, docs/observability.md). A key left empty is read
// from DeerFlow's environment variable for it (LANGSMITH_TRACING,
// LANGSMITH_API_KEY, LANGFUSE_PUBLIC_KEY, ...). Every key is optional;
// without the section nothing is traced unless the standard OTEL_*
// variables say so.
type Tracing struct {
	LangSmith LangSmithTracing `yaml:"langsmith"`
	Langfuse  LangfuseTracing  `yaml:"langfuse"`
	// Monocle is DeerFlow's Monocle instrumentation; Antler does not
	// implement it and refuses enabled: true (use OTEL_TRACES_EXPORTER).
	Monocle MonocleTracing `yaml:"monocle"`
}

// LangSmithTracing sends traces to LangSmith's OTLP endpoint
// (Endpoint + "/otel/v1/traces", with the x-api-key and Langsmith-Project
// headers).
type LangSmithTracing struct {
	// Enabled turns it on (LANGSMITH_TRACING, LANGCHAIN_TRACING_V2).
	Enabled bool `yaml:"enabled"`
	// APIKey is required when enabled (LANGSMITH_API_KEY,
	// LANGCHAIN_API_KEY).
	APIKey string `yaml:"api_key"`
	// Project is the LangSmith project (LANGSMITH_PROJECT; default
	// "deer-flow", as DeerFlow's).
	Project string `yaml:"project"`
	// Endpoint is the API's base URL (LANGSMITH_ENDPOINT; default
	// https://api.smith.langchain.com).
	Endpoint string `yaml:"endpoint"`
}

// LangfuseTracing sends traces to Langfuse's OTLP endpoint
// (Host + "/api/public/otel/v1/traces", with HTTP basic authentication by
// the public and secret keys).
type LangfuseTracing struct {
	// Enabled turns it on (LANGFUSE_TRACING).
	Enabled bool `yaml:"enabled"`
	// PublicKey and SecretKey are required when enabled
	// (LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY).
	PublicKey string `yaml:"public_key"`
	SecretKey string `yaml:"secret_key"`
	// Host is Langfuse's base URL (LANGFUSE_BASE_URL; default
	// https://cloud.langfuse.com).
	Host string `yaml:"host"`
}

// MonocleTracing is accepted so that a DeerFlow file loads; enabled: true
// is an error.
type MonocleTracing struct {
	Enabled     bool   `yaml:"enabled"`
	Exporters   string `yaml:"exporters"`
	OkahuAPIKey string `yaml:"okahu_api_key"`
}

func (p *parser) validateTracing() {
	if p.cfg.Tracing.Monocle.Enabled {
		p.invalid("tracing.monocle.enabled", "Monocle is not implemented; send spans with OTEL_TRACES_EXPORTER=otlp and OTEL_EXPORTER_OTLP_ENDPOINT (docs/observability.md)")
	}
}
