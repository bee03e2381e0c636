// Package telemetry records Antler's runs as OpenTelemetry traces and
// metrics, with the GenAI semantic conventions (gen_ai.* attributes).
//
// A [Provider] owns the SDK's tracer and meter providers and their
// exporters, chosen the OpenTelemetry way (the OTEL_* environment
// variables with the values the contrib autoexport package takes, read
// through an injected lookup) and from DeerFlow's tracing section
// (LangSmith and Langfuse over OTLP/HTTP). With nothing set it exports
// nothing and its providers are nil.
//
// A [Recorder] is what the agent loop, subagents and the CLI hold: the
// tracer and the metric instruments, injected (never the global
// providers). A nil *Recorder records nothing, and every method is safe
// on it, so the loop's cost with telemetry off is a nil check.
//
// [Traceparent], [InjectEnv] and [LogHandler] carry the trace across
// process boundaries and into logs. docs/observability.md lists each span
// and metric.
package telemetry
