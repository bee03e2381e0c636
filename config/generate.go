package config

// The JSON Schemas in schema/ (config.schema.json for config.yaml,
// extensions_config.schema.json for extensions_config.json) are generated
// from the Go types of this package by the test in schema_gen_test.go, which
// also fails when the checked-in files are stale. The generator is a test
// rather than a command because it must follow unexported decoder tables
// (the DeerFlow section list, the sandbox provider keys, rawServer), and so
// that the reflection library stays out of the non-test build.

//go:generate go test -run=TestSchemaFiles . -args -update-schema
